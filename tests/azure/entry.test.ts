/**
 * The Azure entry point (`main`): outside the Functions host, `@azure/functions` runs in test mode
 * and skips registration, so the registrations are observed by spying on `app.*` / `df.app.*`.
 * Nothing here reaches the network: clients connect lazily, on first use.
 */
import type { app } from '@azure/functions';
import { ConfigurationError } from '../../src/domain/errors';

const SETTINGS = {
  ServiceBusConnection__fullyQualifiedNamespace: 'orders-test.servicebus.windows.net',
  CosmosDb__accountEndpoint: 'https://orders-test.documents.azure.com:443/',
};

interface Registrations {
  serviceBus: jest.SpyInstance<void, Parameters<typeof app.serviceBusQueue>>;
  http: jest.SpyInstance<void, Parameters<typeof app.http>>;
  orchestrations: string[];
  activities: string[];
}

/** Loads the entry in a fresh module registry, with the registrations observed in that registry. */
function loadEntry(env: Record<string, string>): Registrations {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    let registrations: Registrations | undefined;
    jest.isolateModules(() => {
      const functions = require('@azure/functions') as typeof import('@azure/functions');
      const durable = require('durable-functions') as typeof import('durable-functions');
      const orchestrations: string[] = [];
      const activities: string[] = [];
      jest.spyOn(durable.app, 'orchestration').mockImplementation((name) => {
        orchestrations.push(name);
        return () => {
          throw new Error('not called');
        };
      });
      jest.spyOn(durable.app, 'activity').mockImplementation((name) => {
        activities.push(name);
        return () => {
          throw new Error('not called');
        };
      });
      registrations = {
        serviceBus: jest.spyOn(functions.app, 'serviceBusQueue').mockImplementation(() => undefined),
        http: jest.spyOn(functions.app, 'http').mockImplementation(() => undefined),
        orchestrations,
        activities,
      };
      require('../../src/functions/index');
    });
    if (registrations === undefined) throw new Error('entry not loaded');
    return registrations;
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

describe('src/functions/index.ts', () => {
  it('registers every function once, with the trigger options of CONTRACTS 1 and the durable client', () => {
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
