/** The size limit the embedded broker and the ledger enforce is the one of the tier the Bicep deploys. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createEmbeddedBroker, STANDARD_TIER_MAX_BATCH_BYTES } from '../../local/broker/broker';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_SERVICE_BUS_TIER,
  MAX_MESSAGE_BYTES_BY_TIER,
} from '../../src/services/message-size';
import { readSettings, SETTING } from '../../src/adapters/settings';
import { ConfigurationError } from '../../src/domain/errors';
import { maxMessageBytesBySku, maxMessageBytesSettingFor, readBicepTexts } from '../support/bicep-settings';

const AZURE = {
  ServiceBusConnection__fullyQualifiedNamespace: 'orders-test.servicebus.windows.net',
  CosmosDb__accountEndpoint: 'https://orders-test.documents.azure.com:443/',
};

describe('Service Bus message size limit', () => {
  it('defaults to the tier main.bicep deploys by default', () => {
    const bicep = readFileSync(resolve(__dirname, '..', '..', 'bicep', 'main.bicep'), 'utf8');
    const tier = /param serviceBusSku string = '(\w+)'/.exec(bicep)?.[1];
    expect(tier).toBe(DEFAULT_SERVICE_BUS_TIER);
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(MAX_MESSAGE_BYTES_BY_TIER[DEFAULT_SERVICE_BUS_TIER]);
    expect(STANDARD_TIER_MAX_BATCH_BYTES).toBe(262_144);
  });

  it('is what the embedded broker refuses over by default', async () => {
    const broker = createEmbeddedBroker();
    broker.createQueue('q');
    const body = 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES);
    await expect(broker.send('q', [{ messageId: 'm', body }])).rejects.toMatchObject({
      serviceBusCode: 'MessageSizeExceeded',
    });
  });
});

describe('the size limit as an app setting', () => {
  it("is written by the Bicep from the namespace's tier, with the figures of the quotas page", () => {
    const texts = readBicepTexts();
    expect(Object.fromEntries(maxMessageBytesBySku(texts.main))).toEqual(MAX_MESSAGE_BYTES_BY_TIER);
    expect(maxMessageBytesSettingFor('Standard', texts)).toBe('262144');
    expect(maxMessageBytesSettingFor('Premium', texts)).toBe('1048576');
    // Each link of the chain is checked: a Bicep that wrote the Standard figure whatever the tier fails.
    const hardWired = {
      ...texts,
      main: texts.main.replace('maxMessageBytesBySku[effectiveServiceBusSku]', '262144'),
    };
    expect(() => maxMessageBytesSettingFor('Premium', hardWired)).toThrow(/does not pass/);
  });

  it('is read at start: the tier default when unset, the value the Bicep wrote when set', () => {
    expect(readSettings(AZURE).maxMessageBytes).toBe(DEFAULT_MAX_MESSAGE_BYTES);
    const premium = { ...AZURE, [SETTING.maxMessageBytes]: maxMessageBytesSettingFor('Premium') };
    expect(readSettings(premium).maxMessageBytes).toBe(1_048_576);
  });

  it.each(['256KB', '1000', '262143.5', '104857601', 'x'])(
    'fails at start naming the setting for %j',
    (value) => {
      const read = () => readSettings({ ...AZURE, [SETTING.maxMessageBytes]: value });
      expect(read).toThrow(ConfigurationError);
      expect(read).toThrow(/SERVICE_BUS_MAX_MESSAGE_BYTES/);
    },
  );
});
