/**
 * When each entry met its outcome, for the picture of a run (`npm start --html`). It listens to
 * the telemetry the Service Bus functions already emit (the same calls Application Insights gets
 * on Azure) and keeps one small record per outcome with the time it was seen: nothing is added to
 * the functions themselves, and a run that asks for no picture records nothing. While `watch`
 * runs it also samples the load (sessions held, messages waiting) a few times a second.
 */
import type { Telemetry, TelemetryProperties } from '../src/services/ports';
import { QUEUE } from '../src/services/queues';

export type TimelineKind = 'applied' | 'duplicate' | 'buffered' | 'parked';

export interface TimelineRecord {
  kind: TimelineKind;
  /** Milliseconds since the recorder started. */
  at: number;
  orderId: string | null;
  sequence: number | null;
  /** How many entries one `applied` record stands for (a gap filled releases those behind it). */
  count: number;
  transactionId: string | null;
  messageId: string | null;
  reason: string | null;
  queue: string | null;
}

/** The load at one moment of the run. */
export interface Load {
  /** Sessions of order-transactions the host holds. */
  orderSessions: number;
  /** Entries waiting or locked on order-transactions. */
  entriesWaiting: number;
  /** Ledger messages waiting or locked. */
  ledgerWaiting: number;
  /** Orchestrations started and not yet finished and purged. */
  sagasInFlight: number;
}

export interface LoadSample extends Load {
  /** Milliseconds since the recorder started. */
  at: number;
}

export interface Watching {
  /** Takes a last sample and stops. */
  stop(): void;
}

/** How often the load is sampled at first: a run of a second still gets some 40 samples. */
export const LOAD_INTERVAL_MS = 25;
/**
 * Most samples kept: past it every other one goes and the interval doubles, so a run of any length
 * keeps between half and all of this many, evenly spread.
 */
export const MAX_LOAD_SAMPLES = 1000;

export interface TimelineRecorder {
  /** `Date.now()` when it started: `at` counts from here. */
  startedAt: number;
  records: readonly TimelineRecord[];
  /** The load over time, oldest first, while `watch` ran. */
  samples: readonly LoadSample[];
  /** The telemetry to hand to the functions: records what it sees, then passes every call on. */
  wrap(telemetry: Telemetry): Telemetry;
  /** Samples `read` until stopped (its timer does not keep the process alive). */
  watch(read: () => Load): Watching;
}

const METRIC_KINDS = new Map<string, TimelineKind>([
  ['entries.applied', 'applied'],
  ['entries.duplicate', 'duplicate'],
  ['entries.buffered', 'buffered'],
]);

function text(value: TelemetryProperties[string]): string | null {
  return value === undefined || value === null ? null : String(value);
}

function number(value: TelemetryProperties[string]): number | null {
  return typeof value === 'number' ? value : null;
}

export function createTimelineRecorder(now: () => number = Date.now): TimelineRecorder {
  const started = now();
  const records: TimelineRecord[] = [];
  const samples: LoadSample[] = [];
  const record = (kind: TimelineKind, count: number, properties: TelemetryProperties): void => {
    records.push({
      kind,
      at: now() - started,
      // A park's event names the session; on order-transactions that is the order.
      orderId: text(
        properties.orderId ?? (properties.queue === QUEUE.orderTransactions ? properties.sessionId : null),
      ),
      sequence: number(properties.sequence),
      count,
      transactionId: text(properties.transactionId),
      messageId: text(properties.messageId),
      reason: text(properties.reason),
      queue: text(properties.queue),
    });
  };
  return {
    startedAt: started,
    records,
    samples,
    watch(read) {
      let interval = LOAD_INTERVAL_MS;
      let timer: NodeJS.Timeout | undefined;
      const start = (): void => {
        timer = setInterval(sample, interval);
        timer.unref();
      };
      function sample(): void {
        samples.push({ at: now() - started, ...read() });
        if (samples.length < MAX_LOAD_SAMPLES) return;
        // Every other sample goes, the newest stays: the spacing doubles, and so does the interval.
        const kept = samples.filter((_, index) => (samples.length - 1 - index) % 2 === 0);
        samples.splice(0, samples.length, ...kept);
        interval *= 2;
        if (timer === undefined) return;
        clearInterval(timer);
        start();
      }
      sample();
      start();
      return {
        stop() {
          if (timer === undefined) return;
          clearInterval(timer);
          timer = undefined;
          sample();
        },
      };
    },
    wrap(telemetry) {
      return {
        trace: (level, message, properties) => telemetry.trace(level, message, properties),
        event(name, properties = {}) {
          if (name === 'MessageParked') record('parked', 1, properties);
          telemetry.event(name, properties);
        },
        metric(name, value, properties = {}) {
          const kind = METRIC_KINDS.get(name);
          if (kind !== undefined) record(kind, value, properties);
          telemetry.metric(name, value, properties);
        },
      };
    },
  };
}
