/**
 * The Durable extension's HTTP management API as the embedded driver serves it, called by the real
 * durable-functions `DurableClient` (`df.getClient`) and by plain requests. Status codes and bodies
 * as azure-functions-durable-extension `src/WebJobs.Extensions.DurableTask/HttpApiHandler.cs` answers:
 * an instance that exists (202 while running), has completed (200; an event is 410 Gone), is unknown (404).
 */
import { join } from 'node:path';
import * as df from 'durable-functions';
import type { OrchestrationContext } from 'durable-functions';
import { InvocationContext, trigger } from '@azure/functions';
import { durableOrchestrationClient } from '../../src/adapters/azure/durable-client';
import { createDurableDriver, type DurableDriver } from '../../local/durable/driver';
import { registerAndCapture } from '../../local/worker/register';
import { loadBundled, type Bundled } from '../support/bundled';

const clientInput = df.input.durableClient();
let driver: DurableDriver;

beforeEach(() => {
  driver = createDurableDriver({
    functions: registerAndCapture({
      orchestrations: [
        {
          name: 'approval',
          handler: function* (context: OrchestrationContext) {
            const decision: unknown = yield context.df.waitForExternalEvent('approve');
            return { input: context.df.getInput(), decision };
          },
        },
      ],
    }),
    clock: { mode: 'virtual' },
  });
  driver.start();
});

afterEach(async () => {
  await driver.stop();
});

/** The durable client and the model's classes, as the app takes them from node_modules or from its bundle. */
interface DurableClientModule {
  getClient: typeof df.getClient;
  input: typeof df.input;
  InvocationContext: typeof InvocationContext;
  trigger: typeof trigger;
}

const durable: DurableClientModule = { getClient: df.getClient, input: df.input, InvocationContext, trigger };

let bundled: Bundled<DurableClientModule> | undefined;

/** durable-functions and @azure/functions as the deployed bundle holds them. */
async function bundledDurable(): Promise<DurableClientModule> {
  bundled ??= await loadBundled<DurableClientModule>(join('tests', 'support', 'durable-client-entry.ts'));
  return bundled.module;
}

afterAll(() => bundled?.remove());

/** An invocation context as the worker builds it for a function with the durable client input. */
async function boundContext(model: DurableClientModule = durable): Promise<InvocationContext> {
  const input = model === durable ? clientInput : model.input.durableClient();
  const context = new model.InvocationContext({
    functionName: 'caller',
    options: { trigger: model.trigger.generic({ type: 'httpTrigger' }), extraInputs: [input] },
  });
  const data = await driver.durableClientInput();
  context.extraInputs.set(input, JSON.parse(String(data.string)));
  return context;
}

async function rpcBase(): Promise<string> {
  const data = JSON.parse(String((await driver.durableClientInput()).string)) as { rpcBaseUrl: string };
  return data.rpcBaseUrl;
}

describe('the served management API', () => {
  it('binds the durable client as the extension serialises it', async () => {
    const data = JSON.parse(String((await driver.durableClientInput()).string)) as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(
      [
        'baseUrl',
        'creationUrls',
        'managementUrls',
        'requiredQueryStringParameters',
        'rpcBaseUrl',
        'taskHubName',
      ].sort(),
    );
    expect(data.rpcBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/durabletask\/$/);
    expect(data.taskHubName).toBe('TestHubName');
    expect(data.managementUrls).toMatchObject({
      id: 'INSTANCEID',
      statusQueryGetUri: expect.stringMatching(
        /\/runtime\/webhooks\/durabletask\/instances\/INSTANCEID\?taskHub=TestHubName&connection=Storage$/,
      ),
    });
  });

  it.each([
    {
      client: 'the DurableClient of durable-functions',
      load: () => Promise.resolve(durable),
      sender: 'http',
    },
    { client: "the same client in the deployed bundle's build", load: bundledDurable, sender: 'fetch' },
  ])(
    'starts, queries and signals an instance through $client (axios sends with $sender)',
    async ({ load, sender }) => {
      const model = await load();
      const fetched = jest.spyOn(globalThis, 'fetch');
      const client = model.getClient(await boundContext(model));
      expect(await client.startNew('approval', { instanceId: 'A-1', input: { amount: 5 } })).toBe('A-1');
      await driver.runUntilIdle();
      expect(await client.getStatus('A-1')).toMatchObject({
        instanceId: 'A-1',
        name: 'approval',
        runtimeStatus: 'Running',
        input: { amount: 5 },
      });
      // A second start of a running instance fails, as the extension's StartNewAsync does.
      await expect(client.startNew('approval', { instanceId: 'A-1' })).rejects.toThrow(
        /unexpected status code: 500/,
      );

      await client.raiseEvent('A-1', 'approve', 'yes');
      await driver.runUntilIdle();
      const done = await client.getStatus('A-1');
      expect(done).toMatchObject({
        runtimeStatus: 'Completed',
        output: { input: { amount: 5 }, decision: 'yes' },
      });
      // A finished instance takes no event (410), which the client does not treat as an error.
      await expect(client.raiseEvent('A-1', 'approve', 'again')).resolves.toBeUndefined();

      await expect(client.getStatus('nobody')).rejects.toThrow(/HTTP 404/);
      await expect(client.raiseEvent('nobody', 'approve', 1)).rejects.toThrow(
        "No instance with ID 'nobody' found.",
      );
      expect(driver.stats().managementRequests).toBeGreaterThanOrEqual(7);
      // Node's http module for the package, Node's fetch for the bundle (scripts/package-app.js, SUBSTITUTES).
      expect(fetched.mock.calls.length > 0 ? 'fetch' : 'http').toBe(sender);
      fetched.mockRestore();
    },
  );

  it('answers with the extension status codes and bodies', async () => {
    const base = await rpcBase();
    const started = await fetch(`${base}orchestrators/approval/B-1`, {
      method: 'POST',
      body: '{"n":1}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(started.status).toBe(202);
    expect(started.headers.get('location')).toMatch(/\/runtime\/webhooks\/durabletask\/instances\/B-1\?/);
    expect(await started.json()).toMatchObject({
      id: 'B-1',
      sendEventPostUri: expect.stringContaining('/instances/B-1/raiseEvent/{eventName}?'),
    });
    await driver.runUntilIdle();

    const running = await fetch(`${base}instances/B-1`);
    expect(running.status).toBe(202);
    expect(running.headers.get('retry-after')).toBe('5');
    const body = (await running.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      name: 'approval',
      instanceId: 'B-1',
      runtimeStatus: 'Running',
      input: { n: 1 },
      output: null,
    });
    expect(String(body.createdTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    expect(
      (
        await fetch(`${base}instances/B-1/raiseEvent/approve`, {
          method: 'POST',
          body: '1',
          headers: { 'Content-Type': 'text/plain' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await fetch(`${base}instances/B-1/raiseEvent/approve`, {
          method: 'POST',
          body: '1',
          headers: { 'Content-Type': 'application/json' },
        })
      ).status,
    ).toBe(202);
    await driver.runUntilIdle();
    expect((await fetch(`${base}instances/B-1`)).status).toBe(200);
    expect(
      (
        await fetch(`${base}instances/B-1/raiseEvent/approve`, {
          method: 'POST',
          body: '1',
          headers: { 'Content-Type': 'application/json' },
        })
      ).status,
    ).toBe(410);

    const unknown = await fetch(`${base}instances/nobody`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe('');
    expect(
      (
        await fetch(`${base}instances/nobody/raiseEvent/approve`, {
          method: 'POST',
          body: '1',
          headers: { 'Content-Type': 'application/json' },
        })
      ).status,
    ).toBe(404);
    expect((await fetch(`${base}orchestrators/nothing/C-1`, { method: 'POST' })).status).toBe(400);
  });

  it('purges as the extension does: by id in any state, or completed ones by filter; then the instance is unknown', async () => {
    const base = await rpcBase();
    const client = durableOrchestrationClient(await boundContext());
    expect(await client.startNew('approval', 'P-1', null)).toBe(true);
    expect(await client.startNew('approval', 'P-1', null)).toBe(false);
    expect(await client.startNew('approval', 'P-2', null)).toBe(true);
    await driver.runUntilIdle();
    await client.raiseEvent('P-1', 'approve', true);
    await driver.runUntilIdle();

    expect((await fetch(`${base}instances/?runtimeStatus=Completed`, { method: 'DELETE' })).status).toBe(400);
    const purged = await fetch(
      `${base}instances/?createdTimeFrom=1970-01-01T00:00:00Z&runtimeStatus=Completed,Failed,Terminated`,
      { method: 'DELETE' },
    );
    expect(purged.status).toBe(200);
    expect(await purged.json()).toEqual({ instancesDeleted: 1 });
    expect(await client.getStatus('P-1')).toBeUndefined();
    expect(await client.getStatus('P-2')).toMatchObject({ runtimeStatus: 'Running' });
    expect(driver.history('P-2').length).toBeGreaterThan(0);
    expect(() => driver.history('P-1')).toThrow("No instance with ID 'P-1' found.");

    const byId = await fetch(`${base}instances/P-2`, { method: 'DELETE' });
    expect(await byId.json()).toEqual({ instancesDeleted: 1 });
    expect((await fetch(`${base}instances/P-2`, { method: 'DELETE' })).status).toBe(404);
    expect(driver.instances()).toEqual([]);
  });
});
