/**
 * One definition per function, seen from both sides: the Azure entry point
 * (`main` in package.json) loaded as the worker loads it, with the stand-in `@azure/functions-core`
 * receiving what `@azure/functions` registers, against what the embedded app registers and runs.
 * Same names, triggers, bindings (queue, connection, sessions, route, methods, auth level, extra
 * inputs), nothing only one side has.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createEmbeddedApp } from '../../local/app';
import type { RegisteredFunction } from '../../local/worker/core';
import { queueFunctionsOf } from '../../local/host/queue-function';
import { httpFunctionsOf } from '../../local/host/http-function';
import { workerRegistrations } from '../support/azure-entry';

/** What `registerFunction` received while the entry point named by package.json `main` loaded. */
function azureRegistrations(): RegisteredFunction[] {
  const main = (
    JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as { main: string }
  ).main;
  // `main` is the build output; the entry's source is the same path under src/ with .ts.
  return workerRegistrations(resolve(__dirname, '../..', main.replace(/^dist\//, '').replace(/\.js$/, '')));
}

function shapes(functions: readonly RegisteredFunction[]): Map<string, unknown> {
  return new Map(
    functions.map((fn) => [fn.metadata.name, JSON.parse(JSON.stringify(fn.metadata.bindings)) as unknown]),
  );
}

describe('the Azure entry point and the embedded app', () => {
  const azure = azureRegistrations();
  const app = createEmbeddedApp({ log: () => undefined });
  afterAll(() => app.stop());

  it('register the same functions with the same binding metadata', () => {
    expect(azure.length).toBeGreaterThan(0);
    const onAzure = shapes(azure);
    const embedded = shapes(app.functions);
    expect([...embedded.keys()].sort()).toEqual([...onAzure.keys()].sort());
    for (const [name, bindings] of onAzure)
      expect({ name, bindings: embedded.get(name) }).toEqual({ name, bindings });
  });

  it('have the triggers of docs/messages.md and the HTTP API, as the embedded host reads them', () => {
    const queues = queueFunctionsOf(azure).map(({ name, queueName, connection, isSessionsEnabled }) => ({
      name,
      queueName,
      connection,
      isSessionsEnabled,
    }));
    expect(queues).toEqual([
      {
        name: 'ledgerProcessor',
        queueName: 'ledger',
        connection: 'ServiceBusConnection',
        isSessionsEnabled: true,
      },
      {
        name: 'orderTransactions',
        queueName: 'order-transactions',
        connection: 'ServiceBusConnection',
        isSessionsEnabled: true,
      },
    ]);
    const routes = httpFunctionsOf(azure).map(
      (fn) => `${fn.name} ${fn.methods.join(',')} ${fn.route} ${fn.authLevel}`,
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        'getOrder GET orders/{orderId} function',
        'cancelOrder POST orders/{orderId}/cancel admin',
        'reviewOrder POST orders/{orderId}/review admin',
      ]),
    );
    const durableTriggers = azure
      .map((fn) => Object.values(fn.metadata.bindings).find((binding) => binding.direction === 'in')?.type)
      .filter((type) => type === 'orchestrationTrigger' || type === 'activityTrigger');
    expect(durableTriggers.filter((type) => type === 'orchestrationTrigger')).toHaveLength(2);
    // orderTransactions and every HTTP function take the durable client; the ledger processor does not.
    const withClient = azure
      .filter((fn) => Object.values(fn.metadata.bindings).some((binding) => binding.type === 'durableClient'))
      .map((fn) => fn.metadata.name);
    expect(withClient).toContain('orderTransactions');
    expect(withClient).not.toContain('ledgerProcessor');
    expect(withClient).toEqual(expect.arrayContaining(httpFunctionsOf(azure).map((fn) => fn.name)));
  });
});
