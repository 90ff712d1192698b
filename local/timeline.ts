/**
 * When each entry met its outcome, for the picture of a run (`npm start --html`). It listens to
 * the telemetry the Service Bus functions already emit (the same calls Application Insights gets
 * on Azure) and keeps one small record per outcome with the time it was seen: nothing is added to
 * the functions themselves, and a run that asks for no picture records nothing.
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

export interface TimelineRecorder {
  /** `Date.now()` when it started: `at` counts from here. */
  startedAt: number;
  records: readonly TimelineRecord[];
  /** The telemetry to hand to the functions: records what it sees, then passes every call on. */
  wrap(telemetry: Telemetry): Telemetry;
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
