/**
 * The operations functions are registered by the Azure entry point, behind function keys. Outside
 * the Functions host `@azure/functions` skips registration, so `app.http` is observed with a spy;
 * nothing reaches the network, as the clients connect on first use.
 */
import type { app } from '@azure/functions';

type HttpCall = Parameters<typeof app.http>;

function httpRegistrations(): HttpCall[] {
  const env = {
    ServiceBusConnection__fullyQualifiedNamespace: 'orders-test.servicebus.windows.net',
    CosmosDb__accountEndpoint: 'https://orders-test.documents.azure.com:443/',
  };
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    let calls: HttpCall[] = [];
    jest.isolateModules(() => {
      const functions = require('@azure/functions') as typeof import('@azure/functions');
      const durable = require('durable-functions') as typeof import('durable-functions');
      const unused = (): never => {
        throw new Error('not called');
      };
      jest.spyOn(durable.app, 'orchestration').mockImplementation(() => unused);
      jest.spyOn(durable.app, 'activity').mockImplementation(() => unused);
      jest.spyOn(functions.app, 'serviceBusQueue').mockImplementation(() => undefined);
      const http = jest.spyOn(functions.app, 'http').mockImplementation(() => undefined);
      require('../../src/functions/index');
      calls = http.mock.calls;
    });
    return calls;
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

describe('src/functions/index.ts: operations', () => {
  it('registers the reads with a function key and the replays with the admin key', () => {
    const ops = httpRegistrations()
      .filter(([name]) => name.startsWith('ops'))
      .map(
        ([name, options]) => `${name} ${options.methods?.join(',')} ${options.route} ${options.authLevel}`,
      );
    expect(ops).toEqual([
      'opsListParked GET ops/parked function',
      'opsShowParked GET ops/parked/{messageId} function',
      'opsReplayParked POST ops/parked/{messageId}/replay admin',
      'opsListDeadLettered GET ops/deadletter/{queue} function',
      'opsShowDeadLettered GET ops/deadletter/{queue}/{messageId} function',
      'opsReplayDeadLettered POST ops/deadletter/{queue}/{messageId}/replay admin',
      'opsSessions GET ops/sessions/{queue} function',
    ]);
  });
});
