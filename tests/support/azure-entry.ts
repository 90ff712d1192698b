/**
 * The Azure entry point (`src/functions/index.ts`) loaded as the host loads it. Outside the
 * Functions host `@azure/functions` runs in test mode and skips registration, so the registrations
 * are observed by spying on `app.*` / `df.app.*`. Nothing reaches the network: clients connect lazily.
 */
import type { app } from '@azure/functions';
import type { RegisteredFunction } from '../../local/worker/core';

export const SETTINGS = {
  ServiceBusConnection__fullyQualifiedNamespace: 'orders-test.servicebus.windows.net',
  CosmosDb__accountEndpoint: 'https://orders-test.documents.azure.com:443/',
};

export interface Registrations {
  serviceBus: jest.SpyInstance<void, Parameters<typeof app.serviceBusQueue>>;
  http: jest.SpyInstance<void, Parameters<typeof app.http>>;
  orchestrations: string[];
  activities: string[];
}

/** Loads the entry in a fresh module registry, with the registrations observed in that registry. */
export function loadEntry(env: Record<string, string>): Registrations {
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
      require('../../src/functions');
    });
    if (registrations === undefined) throw new Error('entry not loaded');
    return registrations;
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

/**
 * What `registerFunction` of the stand-in `@azure/functions-core` (jest maps the module to it)
 * received while `entry` loaded, in a registry of its own: the entry point as the Node worker loads
 * it, whether the TypeScript source or a deployed bundle.
 */
export function workerRegistrations(
  entry: string,
  env: Record<string, string> = SETTINGS,
): RegisteredFunction[] {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    let registered: RegisteredFunction[] = [];
    jest.isolateModules(() => {
      require(entry);
      const core = require('../../local/worker/core') as typeof import('../../local/worker/core');
      registered = core.registeredFunctions();
    });
    return registered;
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}
