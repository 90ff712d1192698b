/** The size limit the embedded broker and the ledger enforce is the one of the tier the Bicep deploys. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createEmbeddedBroker, STANDARD_TIER_MAX_BATCH_BYTES } from '../../src/embedded/broker/broker';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_SERVICE_BUS_TIER,
  MAX_MESSAGE_BYTES_BY_TIER,
} from '../../src/services/message-size';

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
