/**
 * docs/cli.md, `authorizationDelay`: the app's roles not in effect from the run's start, as after a
 * deployment, every Service Bus send and every call of the convoy's store refused with the error the
 * Azure SDKs raise (classified by the Azure adapters' own functions). The app waits for the role
 * rather than dead-lettering: the run ends as the run without the fault, nothing dead-lettered, and
 * the telemetry says which role it waited for, and where. The convoy's clock runs 1000 times faster
 * than real time, so 600 s of delay and the handlers' backoff take a second or so.
 */
import { readFileSync } from 'node:fs';
import { readInputFile } from '../../local/cli/input-file';
import { createEmbeddedApp, type EmbeddedAppOptions } from '../../local/app';
import type { Report } from '../../local/report';
import type { TelemetryProperties } from '../../src/services/ports';
import { FAST, SAMPLE_PATH } from '../support/e2e';
import { expectAccountAddsUp } from '../support/account';

const inputs = [...readInputFile(SAMPLE_PATH)];
const CATALOG = JSON.parse(
  readFileSync(SAMPLE_PATH.replace('ledger.ndjson', 'catalog.json'), 'utf8'),
) as Record<string, number>;
const OPTIONS: EmbeddedAppOptions = { ...FAST, catalog: CATALOG, timeScale: 1000 };

interface AuthorizationRun {
  report: Report;
  /** Calls the delay refused. */
  refused: number;
  /** Deliveries that gave their message back after waiting. */
  failedDeliveries: number;
  waits: Array<{ name: string; properties: TelemetryProperties }>;
  retryTraces: string[];
}

async function run(seconds: number): Promise<AuthorizationRun> {
  const app = createEmbeddedApp({ ...OPTIONS, faults: seconds > 0 ? { authorizationDelay: seconds } : {} });
  try {
    await app.sendLedger(inputs);
    await app.drain();
    const report = await app.report();
    expectAccountAddsUp(report);
    const host = app.host.stats();
    return {
      report,
      refused: app.outages.find((outage) => outage.name === 'authorizationDelay')?.injected() ?? 0,
      failedDeliveries: host.failed,
      waits: app.telemetry.events.filter((event) => event.name === 'AuthorizationPending'),
      retryTraces: app.telemetry.traces
        .filter((trace) => /waiting for the role/.test(trace.message))
        .map((trace) => trace.message),
    };
  } finally {
    await app.stop();
  }
}

const sagas = (report: Report): Array<[string, unknown]> =>
  report.orders.map((order) => [order.orderId, order.saga]);

describe('authorizationDelay', () => {
  let clean: AuthorizationRun;
  beforeAll(async () => {
    clean = await run(0);
    expect(clean.report.deadLettered).toEqual([]);
    expect(clean.report.orders.some((order) => order.saga?.status === 'completed')).toBe(true);
    expect(clean.waits).toEqual([]);
  });

  it.each([60, 600])(
    '%i s: the same orders and sagas as without it, nothing dead-lettered',
    async (seconds) => {
      const delayed = await run(seconds);
      expect(delayed.report.deadLettered).toEqual([]);
      expect(delayed.report.orders).toEqual(clean.report.orders);
      expect(sagas(delayed.report)).toEqual(sagas(clean.report));
      expect(delayed.report.parked).toEqual(clean.report.parked);
      // The delay did refuse calls, and the app waited for the roles, saying which and where.
      expect(delayed.refused).toBeGreaterThan(0);
      const roles = new Set(
        delayed.waits.map((wait) => `${String(wait.properties.role)} on ${String(wait.properties.resource)}`),
      );
      expect(roles).toContain(
        'Azure Service Bus Data Sender on queue order-transactions of the embedded broker',
      );
      // Only that one: the ledger's sends are refused from the start, so no entry reaches the consumer
      // (and its store) until the delay is over. The store's refusal: tests/embedded/outages.test.ts.
      expect(roles.size).toBe(1);
      expect(delayed.retryTraces.length).toBeGreaterThan(0);
      // Past one delivery's 3 minutes of waiting, a message goes back and is waited for again.
      if (seconds > 180) expect(delayed.failedDeliveries).toBeGreaterThan(0);
      else expect(delayed.failedDeliveries).toBe(0);
    },
  );
});
