/**
 * host.json's session settings at Azure's round trips: orders per second per instance of the
 * shipped `prefetchCount`, `sessionIdleTimeout` and `maxConcurrentSessions` beside the settings they
 * replaced, by the session model (./session-model) in virtual time, and a grid of the candidates
 * they were chosen from. The round trips are what the model assumes of an in-region deployment,
 * not measurements: a Service Bus call (receive, completion) 10 ms, a session accept 10 ms, the
 * convoy's one Cosmos DB transactional batch per entry 7 ms. Handler CPU time is left out: the rates are upper bounds, as the sizing (./deployment-sizing)
 * needs them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { timeSpanMs } from '../local/host/host-settings';
import { textTable } from '../tools/cli/text-table';
import type { BenchTarget } from './results';
import { repositoryRoot } from './repo-root';
import { simulateSessions } from './session-model';
import { sessionArrivals, type Arrival, SESSION_TABLE_DEFAULTS } from './session-table';

export interface AzureLatencies {
  /** A receive, a completion: one Service Bus round trip. */
  serviceBusMs: number;
  /** Accepting the next session. */
  sessionAcceptMs: number;
  /** The consumer's transactional batch on the order's partition. */
  cosmosBatchMs: number;
}

export const AZURE_LATENCIES: AzureLatencies = { serviceBusMs: 10, sessionAcceptMs: 10, cosmosBatchMs: 7 };

export interface SessionSettings {
  prefetchCount: number;
  sessionIdleTimeoutMs: number;
  maxConcurrentSessions: number;
}

/** What host.json said before prefetch was modelled: every receive a round trip. */
export const PREVIOUS_SETTINGS: SessionSettings = {
  prefetchCount: 0,
  sessionIdleTimeoutMs: 100,
  maxConcurrentSessions: 32,
};

/** The shipped host.json must carry at least this many times the previous settings' orders per second. */
export const HOST_SETTINGS_MIN_RATIO = 1.5;

/** The three keys of host.json's `extensions.serviceBus` the model reads; the extension's defaults where unset. */
export function hostJsonSessionSettings(hostJsonText: string): SessionSettings {
  const serviceBus = (
    JSON.parse(hostJsonText) as {
      extensions?: {
        serviceBus?: { prefetchCount?: number; sessionIdleTimeout?: string; maxConcurrentSessions?: number };
      };
    }
  ).extensions?.serviceBus;
  if (serviceBus?.sessionIdleTimeout === undefined) {
    throw new Error(
      'host.json sets no extensions.serviceBus.sessionIdleTimeout: the try timeout (60 s) would hold every drained session',
    );
  }
  return {
    // ServiceBusOptions.cs: PrefetchCount 0 and MaxConcurrentSessions 8 by default.
    prefetchCount: serviceBus.prefetchCount ?? 0,
    sessionIdleTimeoutMs: timeSpanMs(serviceBus.sessionIdleTimeout),
    maxConcurrentSessions: serviceBus.maxConcurrentSessions ?? 8,
  };
}

export function shippedSessionSettings(root: string = repositoryRoot()): SessionSettings {
  return hostJsonSessionSettings(readFileSync(join(root, 'host.json'), 'utf8'));
}

export interface InstanceWorkload {
  orders: number;
  entriesPerOrder: number;
  arrival: Arrival;
  /** Trickle: ms between two entries of one order. */
  trickleGapMs: number;
}

export const AZURE_WORKLOAD: InstanceWorkload = {
  orders: SESSION_TABLE_DEFAULTS.orders,
  entriesPerOrder: 10,
  arrival: 'burst',
  trickleGapMs: SESSION_TABLE_DEFAULTS.trickleGapMs,
};

export interface InstanceRate extends SessionSettings {
  arrival: Arrival;
  ordersPerSecond: number;
  entriesPerSecond: number;
  acceptsPerEntry: number;
  /** Of the time slots held a session, the share they held one with nothing at the broker. */
  heldIdleShare: number;
  /** Arrival to completed, ms, 99th percentile. */
  waitMs99: number;
}

/** Orders (and entries) per second one instance's session processor carries, by the model. */
export function instanceRate(
  settings: SessionSettings,
  latencies: AzureLatencies = AZURE_LATENCIES,
  workload: InstanceWorkload = AZURE_WORKLOAD,
): InstanceRate {
  const arrivals = sessionArrivals(
    { ...SESSION_TABLE_DEFAULTS, ...workload, roundTripMs: latencies.serviceBusMs },
    workload.arrival,
  );
  const run = simulateSessions(arrivals, {
    ...settings,
    acceptMs: latencies.sessionAcceptMs,
    receiveMs: latencies.serviceBusMs,
    handlerMs: latencies.cosmosBatchMs,
    completeMs: latencies.serviceBusMs,
  });
  const seconds = run.makespanMs / 1000;
  const slotMs = run.heldIdleMs + run.receivingMs + run.handlingMs + run.accepts * latencies.sessionAcceptMs;
  return {
    ...settings,
    arrival: workload.arrival,
    ordersPerSecond: seconds > 0 ? workload.orders / seconds : 0,
    entriesPerSecond: seconds > 0 ? run.messages / seconds : 0,
    acceptsPerEntry: run.messages > 0 ? run.accepts / run.messages : 0,
    heldIdleShare: slotMs > 0 ? run.heldIdleMs / slotMs : 0,
    waitMs99: run.waitsMs[Math.max(0, Math.ceil(0.99 * run.waitsMs.length) - 1)] ?? 0,
  };
}

export interface HostSettingsComparison {
  latencies: AzureLatencies;
  workload: InstanceWorkload;
  /** host.json as it ships, and the settings it replaced, on the same burst. */
  shipped: InstanceRate;
  previous: InstanceRate;
  /** shipped.ordersPerSecond / previous.ordersPerSecond. */
  ratio: number;
  /** The grid the settings were chosen from: each prefetch x idle timeout, burst and trickle. */
  candidates: InstanceRate[];
}

export const CANDIDATE_PREFETCH = [0, 1, 2, 16];
export const CANDIDATE_IDLE_MS = [25, 50, 100, 500];

export function compareHostSettings(
  shippedSettings: SessionSettings = shippedSessionSettings(),
  latencies: AzureLatencies = AZURE_LATENCIES,
  workload: InstanceWorkload = AZURE_WORKLOAD,
): HostSettingsComparison {
  const shipped = instanceRate(shippedSettings, latencies, workload);
  const previous = instanceRate(PREVIOUS_SETTINGS, latencies, workload);
  const candidates: InstanceRate[] = [];
  for (const arrival of ['burst', 'trickle'] as const) {
    for (const prefetchCount of CANDIDATE_PREFETCH) {
      for (const sessionIdleTimeoutMs of CANDIDATE_IDLE_MS) {
        candidates.push(
          instanceRate(
            {
              prefetchCount,
              sessionIdleTimeoutMs,
              maxConcurrentSessions: shippedSettings.maxConcurrentSessions,
            },
            latencies,
            { ...workload, arrival },
          ),
        );
      }
    }
  }
  return {
    latencies,
    workload,
    shipped,
    previous,
    ratio: previous.ordersPerSecond > 0 ? shipped.ordersPerSecond / previous.ordersPerSecond : 0,
    candidates,
  };
}

const describe = (settings: SessionSettings): string =>
  `prefetchCount ${settings.prefetchCount}, sessionIdleTimeout ${settings.sessionIdleTimeoutMs} ms, maxConcurrentSessions ${settings.maxConcurrentSessions}`;

export function hostSettingsTargets(comparison: HostSettingsComparison | null): BenchTarget[] {
  if (comparison === null) return [];
  const { shipped, previous, ratio } = comparison;
  return [
    {
      target: `host.json on Azure: >= ${HOST_SETTINGS_MIN_RATIO}x the orders per second per instance of the previous session settings (session model)`,
      pass: ratio >= HOST_SETTINGS_MIN_RATIO,
      detail:
        `${ratio.toFixed(2)}x: ${Math.round(shipped.ordersPerSecond)} orders/s (${describe(shipped)}) vs ` +
        `${Math.round(previous.ordersPerSecond)} (${describe(previous)})`,
    },
  ];
}

export function formatHostSettings(comparison: HostSettingsComparison): string {
  const { latencies, workload, shipped, previous } = comparison;
  const row = (label: string, rate: InstanceRate): string[] => [
    label,
    rate.arrival,
    String(rate.prefetchCount),
    String(rate.sessionIdleTimeoutMs),
    String(rate.maxConcurrentSessions),
    String(Math.round(rate.ordersPerSecond)),
    rate.acceptsPerEntry.toFixed(2),
    String(Math.round(rate.heldIdleShare * 100)),
    String(Math.round(rate.waitMs99)),
  ];
  const header = [
    'settings',
    'arrival',
    'prefetch',
    'idle ms',
    'sessions',
    'orders/s',
    'accepts/entry',
    'held idle %',
    'p99 wait ms',
  ];
  const same = (a: SessionSettings, b: SessionSettings): boolean =>
    a.prefetchCount === b.prefetchCount &&
    a.sessionIdleTimeoutMs === b.sessionIdleTimeoutMs &&
    a.maxConcurrentSessions === b.maxConcurrentSessions;
  const label = (rate: InstanceRate): string =>
    same(rate, shipped) ? 'shipped' : same(rate, previous) ? 'previous' : '';
  return [
    `host.json on Azure, one instance, by the session model (virtual time): ${workload.orders} orders x ${workload.entriesPerOrder} entries;`,
    `a receive or completion ${latencies.serviceBusMs} ms, a session accept ${latencies.sessionAcceptMs} ms, the store batch ${latencies.cosmosBatchMs} ms;`,
    "prefetched messages arrive without a receive round trip. burst: every entry at once; trickle: an order's entries",
    `${workload.trickleGapMs} ms apart`,
    '',
    textTable(
      [
        header,
        row('shipped', shipped),
        row('previous', previous),
        ...comparison.candidates.map((rate) => row(label(rate), rate)),
      ],
      Number.POSITIVE_INFINITY,
      (column) => (column <= 1 ? 'left' : 'right'),
    ),
    '',
    `shipped: host.json; previous: ${describe(previous)}. Handler CPU time is left out: the numbers are upper bounds.`,
  ].join('\n');
}
