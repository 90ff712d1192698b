/**
 * Recording one run: every application of an entry, every store round trip and every telemetry
 * outcome, as the consumer saw them, so that a row can be computed and the end state checked.
 */
import { performance } from 'node:perf_hooks';
import type { Document, DocumentContainer, Telemetry, TelemetryProperties } from '../src/services/ports';
import { partitionKeyField } from '../src/adapters/document-rules';
import type { BenchWorkload } from './workload';
import type { LedgerInput } from '../local/app';
import type { HostLog } from '../local/functions-host';

export type Outcome = 'first' | 'duplicate';

export interface Recorder {
  sent(message: LedgerInput, at: number): void;
  /** One application of one entry. */
  applied(orderId: string, sequence: number, predecessorApplied: boolean | undefined, at: number): void;
  /** How many times the entry was applied so far. */
  applications(orderId: string, sequence: number): number;
  roundTrip(partitionKey: string): void;
  roundTripTook(ms: number): void;
  /** A delivery ended; its round trips are `explicit`, or else those counted on its order since the last one ended. */
  outcome(orderId: string, outcome: Outcome, trips?: number): void;
  log: HostLog;
  lastAppliedAt(): number;
  result(): Recorded;
}

export interface Recorded {
  latencies: number[];
  messages: number;
  orderingViolations: number;
  doubleEffects: number;
  trips: Record<Outcome, number>;
  outcomes: Record<Outcome, number>;
  totalTrips: number;
  tripMs: number;
  warnings: number;
}

/**
 * Where each entry of the workload is counted: its order's first slot in flat arrays, and the
 * entry at `first + sequence - 1`. Made before the run, so that an application costs one Map
 * lookup and a few array writes, not four Maps keyed by strings: the recorder runs inside the
 * measured CPU of every row and of its twin (./twin), which records each entry it handles too.
 */
interface EntrySlots {
  firstSlot: Map<string, number>;
  transactionIds: string[];
}

function entrySlots(workload: BenchWorkload): EntrySlots {
  const firstSlot = new Map<string, number>();
  const transactionIds: string[] = [];
  for (const [orderId, ids] of workload.transactionIds) {
    firstSlot.set(orderId, transactionIds.length);
    transactionIds.push(...ids);
  }
  return { firstSlot, transactionIds };
}

export function createRecorder(workload: BenchWorkload): Recorder {
  const sentAt = new Map<string, number>();
  const { firstSlot, transactionIds } = entrySlots(workload);
  /** Applications of each entry, and when it was first applied (NaN: never). */
  const applications = new Uint32Array(transactionIds.length);
  const appliedAt = new Float64Array(transactionIds.length).fill(Number.NaN);
  const pending = new Map<string, number>();
  const trips: Record<Outcome, number> = { first: 0, duplicate: 0 };
  const outcomes: Record<Outcome, number> = { first: 0, duplicate: 0 };
  let totalTrips = 0;
  let tripMs = 0;
  let lastAppliedAt = 0;
  let orderingViolations = 0;
  let doubleEffects = 0;
  let warnings = 0;

  const slotOf = (orderId: string, sequence: number): number => {
    const first = firstSlot.get(orderId);
    const count = workload.transactionIds.get(orderId)?.length ?? 0;
    if (first === undefined || !Number.isInteger(sequence) || sequence < 1 || sequence > count)
      throw new Error(`bench: no entry ${orderId} #${sequence}`);
    return first + sequence - 1;
  };

  return {
    sent(message, at) {
      sentAt.set(message.messageId, at);
    },
    applied(orderId, sequence, predecessorApplied, at) {
      const slot = slotOf(orderId, sequence);
      const count = applications[slot] + 1;
      applications[slot] = count;
      if (count > 1) doubleEffects += 1;
      else appliedAt[slot] = at;
      const inOrder = predecessorApplied ?? (sequence === 1 || applications[slot - 1] > 0);
      if (!inOrder) orderingViolations += 1;
      lastAppliedAt = Math.max(lastAppliedAt, at);
    },
    applications: (orderId, sequence) => applications[slotOf(orderId, sequence)],
    roundTrip(partitionKey) {
      totalTrips += 1;
      pending.set(partitionKey, (pending.get(partitionKey) ?? 0) + 1);
    },
    roundTripTook(ms) {
      tripMs += ms;
    },
    outcome(orderId, outcome, explicit) {
      outcomes[outcome] += 1;
      if (explicit !== undefined) {
        trips[outcome] += explicit;
        return;
      }
      trips[outcome] += pending.get(orderId) ?? 0;
      pending.delete(orderId);
    },
    log(_functionName, level) {
      if (level === 'warning' || level === 'error' || level === 'critical') warnings += 1;
    },
    lastAppliedAt: () => lastAppliedAt,
    result() {
      const latencies: number[] = [];
      let messages = 0;
      for (let slot = 0; slot < transactionIds.length; slot += 1) {
        if (applications[slot] === 0) continue;
        messages += 1;
        const batchId = workload.batchOf.get(transactionIds[slot]);
        const sent = batchId === undefined ? undefined : sentAt.get(batchId);
        if (sent !== undefined) latencies.push(appliedAt[slot] - sent);
      }
      latencies.sort((a, b) => a - b);
      return {
        latencies,
        messages,
        orderingViolations,
        doubleEffects,
        trips,
        outcomes,
        totalTrips,
        tripMs,
        warnings,
      };
    },
  };
}

/** Counts and times every call, by partition key, so that a convoy delivery's round trips can be told apart. */
export function countingContainer(inner: DocumentContainer, recorder: Recorder): DocumentContainer {
  const field = partitionKeyField(inner.partitionKeyPath);
  const keyOf = (document: Document): string => String(document[field]);
  const timed = <T>(partitionKey: string, call: () => Promise<T>): Promise<T> => {
    recorder.roundTrip(partitionKey);
    const started = performance.now();
    return call().finally(() => recorder.roundTripTook(performance.now() - started));
  };
  return {
    name: inner.name,
    partitionKeyPath: inner.partitionKeyPath,
    create: (document) => timed(keyOf(document), () => inner.create(document)),
    read: <T extends Document>(partitionKey: string, id: string) =>
      timed(partitionKey, () => inner.read<T>(partitionKey, id)),
    replace: (document, options) => timed(keyOf(document), () => inner.replace(document, options)),
    upsert: (document, options) => timed(keyOf(document), () => inner.upsert(document, options)),
    delete: (partitionKey, id, options) => timed(partitionKey, () => inner.delete(partitionKey, id, options)),
    batch: (partitionKey, operations) => timed(partitionKey, () => inner.batch(partitionKey, operations)),
    query: <T extends Document>(spec: Parameters<DocumentContainer['query']>[0]) =>
      timed(spec.partitionKey ?? '', () => inner.query<T>(spec)),
  };
}

/**
 * The convoy's outcomes, from the metrics the consumer records after each commit. An
 * `entries.applied` of n at sequence s applied s..s+n-1: the bench's entries are never rejected,
 * so entries released from the buffer follow the one that filled the gap without a hole.
 */
export function observingTelemetry(inner: Telemetry, recorder: Recorder): Telemetry {
  return {
    trace: (level, message, properties) => inner.trace(level, message, properties),
    event: (name, properties) => inner.event(name, properties),
    metric(name: string, value: number, properties?: TelemetryProperties) {
      inner.metric(name, value, properties);
      const orderId = properties?.orderId;
      if (typeof orderId !== 'string') return;
      if (name === 'entries.applied') {
        const at = performance.now();
        const sequence = Number(properties?.sequence);
        for (let i = 0; i < value; i++) recorder.applied(orderId, sequence + i, undefined, at);
        recorder.outcome(orderId, 'first');
      } else if (name === 'entries.buffered') {
        recorder.outcome(orderId, 'first');
      } else if (name === 'entries.duplicate') {
        recorder.outcome(orderId, 'duplicate');
      }
    },
  };
}
