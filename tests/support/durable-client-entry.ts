/**
 * The durable client as the deployed bundle holds it: tests/embedded/durable-management-api.test.ts
 * builds this file with the package's esbuild options (scripts/package-app.js) and drives the client
 * against the Durable extension's HTTP API as the embedded runtime serves it.
 */
export { getClient, input } from 'durable-functions';
export { InvocationContext, trigger } from '@azure/functions';
