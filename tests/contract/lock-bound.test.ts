/**
 * A handler cannot outlive its session lock (src/adapters/handler-time.ts): the slowest a Service Bus
 * handler can take, from the figures the code runs with, is below host.json's
 * `maxAutoLockRenewalDuration`, and `functionTimeout` is not above it. And a role not yet in effect
 * is waited out for as long as a role assignment can take, before anything is dead-lettered. Each
 * check is shown to fail on a copy changed to break it.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  authorizationWaitMs,
  CALL_BOUND_MS,
  COSMOS_REQUEST_TIMEOUT_MS,
  COSMOS_RETRY_OPTIONS,
  cosmosCallWorstMs,
  HANDLER_TIME,
  handlerTimeOf,
  lockBoundProblems,
  SERVICE_BUS_RETRY_OPTIONS,
  serviceBusCallWorstMs,
  slowestHandlerMs,
  type HostTime,
} from '../../src/adapters/handler-time';
import { HANDLER_BACKOFF } from '../../src/services/backoff';
import { timeSpanMs } from '../../local/host/host-settings';

const ROOT = resolve(__dirname, '..', '..');

interface HostJson {
  functionTimeout: string;
  extensions: { serviceBus: { maxAutoLockRenewalDuration: string } };
}

function hostTimeOf(hostJson: HostJson): HostTime {
  return {
    functionTimeoutMs: timeSpanMs(hostJson.functionTimeout),
    maxAutoLockRenewalMs: timeSpanMs(hostJson.extensions.serviceBus.maxAutoLockRenewalDuration),
  };
}

const hostJson = JSON.parse(readFileSync(resolve(ROOT, 'host.json'), 'utf8')) as HostJson;
const deployed = hostTimeOf(hostJson);

/** A copy of host.json with `change` applied. */
function changedHost(change: (copy: HostJson) => void): HostTime {
  const copy = JSON.parse(JSON.stringify(hostJson)) as HostJson;
  change(copy);
  return hostTimeOf(copy);
}

/** The default of a Bicep `param name int = N` in the file. */
function bicepIntDefault(file: string, name: string): number {
  const text = readFileSync(resolve(ROOT, file), 'utf8');
  const match = new RegExp(`^param ${name} int = (\\d+)`, 'm').exec(text);
  if (match === null) throw new Error(`${file} declares no int parameter ${name} with a default`);
  return Number(match[1]);
}

describe('the deployed figures', () => {
  it('a handler ends before the host stops renewing its lock, and before the host times it out', () => {
    expect(lockBoundProblems(deployed)).toEqual([]);
    expect(slowestHandlerMs(HANDLER_TIME)).toBeLessThan(deployed.maxAutoLockRenewalMs);
    expect(deployed.functionTimeoutMs).toBeLessThanOrEqual(deployed.maxAutoLockRenewalMs);
  });

  it('are the ones the code runs with: the backoff policy and the clients’ retry options', () => {
    expect(HANDLER_TIME).toEqual({
      rideOutBudgetMs: HANDLER_BACKOFF.budgetMs,
      deliveryDeadlineMs: HANDLER_BACKOFF.deadlineMs,
      callBoundMs: CALL_BOUND_MS,
    });
    expect(CALL_BOUND_MS).toBe(
      Math.max(
        serviceBusCallWorstMs(SERVICE_BUS_RETRY_OPTIONS),
        cosmosCallWorstMs(COSMOS_REQUEST_TIMEOUT_MS, COSMOS_RETRY_OPTIONS),
      ),
    );
  });

  it('a role not in effect is waited out for 30 minutes, over maxDeliveryCount deliveries', () => {
    for (const file of ['bicep/main.bicep', 'bicep/modules/servicebus.bicep']) {
      expect(authorizationWaitMs(bicepIntDefault(file, 'maxDeliveryCount'))).toBeGreaterThanOrEqual(
        30 * 60_000,
      );
    }
  });
});

describe('one call under the clients’ retry options', () => {
  it('Service Bus: every try times out, with the fixed delay between tries', () => {
    expect(serviceBusCallWorstMs({ maxRetries: 2, retryDelayInMs: 2_000, timeoutInMs: 15_000 })).toBe(49_000);
    // The SDK's defaults: a minute a try, 4 tries, 30 s between them.
    expect(serviceBusCallWorstMs({ maxRetries: 3, retryDelayInMs: 30_000, timeoutInMs: 60_000 })).toBe(
      330_000,
    );
  });

  it('Cosmos DB: every request times out, with as many throttling waits as count and budget allow', () => {
    const retry = {
      maxRetryAttemptCount: 4,
      fixedRetryIntervalInMilliseconds: 1_000,
      maxWaitTimeInSeconds: 10,
    };
    expect(cosmosCallWorstMs(10_000, retry)).toBe(5 * 10_000 + 4 * 1_000);
    // The wait budget binds before the count does.
    expect(
      cosmosCallWorstMs(10_000, {
        ...retry,
        maxRetryAttemptCount: 9,
        fixedRetryIntervalInMilliseconds: 4_000,
      }),
    ).toBe(10 * 10_000 + 3 * 4_000);
  });
});

describe('the checks fail on a copy that breaks them', () => {
  it('functionTimeout above maxAutoLockRenewalDuration', () => {
    const host = changedHost((copy) => {
      copy.functionTimeout = '00:10:00';
    });
    expect(lockBoundProblems(host)).toEqual([
      'functionTimeout (600 s) is above maxAutoLockRenewalDuration (300 s)',
    ]);
  });

  it('a lock renewed for less than the slowest handler', () => {
    const host = changedHost((copy) => {
      copy.extensions.serviceBus.maxAutoLockRenewalDuration = '00:04:00';
      copy.functionTimeout = '00:04:00';
    });
    expect(lockBoundProblems(host).join('\n')).toMatch(/is not below maxAutoLockRenewalDuration \(240 s\)/);
  });

  it('a host timeout that would cut a handler keeping to its deadline', () => {
    const host = changedHost((copy) => {
      copy.functionTimeout = '00:04:00';
    });
    expect(lockBoundProblems(host)).toEqual([
      `the slowest handler (${slowestHandlerMs(HANDLER_TIME) / 1000} s) is above functionTimeout (240 s), which would restart the worker`,
    ]);
  });

  it('a deadline too late for the lock', () => {
    const late = handlerTimeOf({ ...HANDLER_BACKOFF, deadlineMs: 290_000 }, CALL_BOUND_MS);
    expect(lockBoundProblems(deployed, late).join('\n')).toMatch(/is not below maxAutoLockRenewalDuration/);
  });

  it('a handler with no deadline at all', () => {
    const none = handlerTimeOf({ ...HANDLER_BACKOFF, deadlineMs: undefined }, CALL_BOUND_MS);
    expect(lockBoundProblems(deployed, none).join('\n')).toMatch(/Infinity s\) is not below/);
  });

  it('a ride-out budget past the deadline', () => {
    const longer = handlerTimeOf({ ...HANDLER_BACKOFF, budgetMs: 210_000 }, CALL_BOUND_MS);
    expect(lockBoundProblems(deployed, longer)).toEqual([
      'the ride-out budget (210 s) is past the delivery deadline (200 s)',
    ]);
  });

  it('the Service Bus SDK’s default retry options', () => {
    const defaults = serviceBusCallWorstMs({ maxRetries: 3, retryDelayInMs: 30_000, timeoutInMs: 60_000 });
    expect(lockBoundProblems(deployed, handlerTimeOf(HANDLER_BACKOFF, defaults)).join('\n')).toMatch(
      /call bound 330 s = 530 s\) is not below/,
    );
  });

  it('fewer deliveries than a role assignment needs', () => {
    expect(authorizationWaitMs(5)).toBeLessThan(30 * 60_000);
  });
});
