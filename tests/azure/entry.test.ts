/**
 * The Azure entry point (`main`): outside the Functions host, `@azure/functions` runs in test mode
 * and skips registration, so the registrations are observed by spying on `app.*` / `df.app.*`.
 * Nothing here reaches the network: clients connect lazily, on first use.
 */
import { ConfigurationError } from '../../src/domain/errors';
import { loadEntry, SETTINGS } from '../support/azure-entry';

describe('src/functions/index.ts', () => {
  it('registers every function once, with the trigger options of docs/messages.md and the durable client', () => {
    const { serviceBus, http, orchestrations, activities } = loadEntry(SETTINGS);

    const queues = serviceBus.mock.calls.map(([name, options]) => ({
      name,
      queueName: options.queueName,
      connection: options.connection,
      isSessionsEnabled: options.isSessionsEnabled,
      durableClient: (options.extraInputs ?? []).some((input) => input.type === 'durableClient'),
    }));
    expect(queues).toEqual([
      {
        name: 'ledgerProcessor',
        queueName: 'ledger',
        connection: 'ServiceBusConnection',
        isSessionsEnabled: true,
        durableClient: false,
      },
      {
        name: 'orderTransactions',
        queueName: 'order-transactions',
        connection: 'ServiceBusConnection',
        isSessionsEnabled: true,
        durableClient: true,
      },
    ]);
    expect([...orchestrations].sort()).toEqual(['cancelConfirmedOrder', 'fulfillOrder']);
    expect([...activities].sort()).toEqual([
      'cancelShipment',
      'chargePayment',
      'commitInventory',
      'confirmOrder',
      'createShipment',
      'raiseSagaAlert',
      'recordSagaStatus',
      'refundPayment',
      'releaseInventory',
      'reserveInventory',
    ]);
    const routes = http.mock.calls.map(
      ([name, options]) => `${name} ${options.methods?.join(',')} ${options.route} ${options.authLevel}`,
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        'getOrder GET orders/{orderId} function',
        'cancelOrder POST orders/{orderId}/cancel admin',
        'reviewOrder POST orders/{orderId}/review admin',
      ]),
    );
    expect(
      http.mock.calls.every(([, options]) =>
        (options.extraInputs ?? []).some((input) => input.type === 'durableClient'),
      ),
    ).toBe(true);
  });

  it('fails at start naming a missing setting', () => {
    expect(() => loadEntry({ CosmosDb__accountEndpoint: SETTINGS.CosmosDb__accountEndpoint })).toThrow(
      new ConfigurationError('ServiceBusConnection__fullyQualifiedNamespace', 'is required but not set')
        .message,
    );
  });

  it('fails at start naming a malformed setting', () => {
    expect(() => loadEntry({ ...SETTINGS, PAYMENT_CREDIT_LIMIT: 'lots' })).toThrow(
      /PAYMENT_CREDIT_LIMIT must be an integer >= 0, got "lots"/,
    );
  });

  it('reads the duplicate-detection window replay respects from its setting, as the Bicep writes it', () => {
    const { readSettings } =
      require('../../src/adapters/settings') as typeof import('../../src/adapters/settings');
    expect(readSettings(SETTINGS).duplicateDetectionWindowMs).toBe(3_600_000);
    expect(
      readSettings({ ...SETTINGS, SERVICE_BUS_DUPLICATE_DETECTION_WINDOW: 'P1DT30M' })
        .duplicateDetectionWindowMs,
    ).toBe((24 * 60 + 30) * 60_000);
    for (const bad of ['1h', 'PT10S', 'P8D', 'PT']) {
      expect(() => loadEntry({ ...SETTINGS, SERVICE_BUS_DUPLICATE_DETECTION_WINDOW: bad })).toThrow(
        /SERVICE_BUS_DUPLICATE_DETECTION_WINDOW must be an ISO 8601 duration from PT20S to P7D/,
      );
    }
  });
});
