/**
 * Seeded fault injection for the embedded runtime (docs/cli.md, `--faults`). Every fault draw is a
 * function of the seed, the fault and what it is drawn for (`keyedRandom`: a message and its
 * delivery, a store call and its attempt, an activity invocation), never of how many draws came
 * before, so concurrent sessions may interleave in any order and one seed still injects the same
 * faults. Only the outages' start moments come from a seeded stream (`faultRandom`), one draw each.
 */
import { createHash } from 'node:crypto';
import { TransientError } from '../src/domain/errors';
import type { DocumentContainer, MessageSender, OutgoingMessage } from '../src/services/ports';
import { checkedContainer, targetOf, type ContainerCall } from './checked-container';
import { decimalNumber } from '../tools/cli/flags';

export const FAULT_NAMES = [
  'duplicate',
  'crashAfterCommit',
  'transient',
  'reorder',
  'activityTransient',
  'activityResultLost',
  'recycleAfterCommit',
] as const;
export type FaultName = (typeof FAULT_NAMES)[number];
/**
 * The faults that can also be aimed at one order, `name@ORDER`, with no draw: once, the first
 * delivery of that order's entries on `order-transactions` (its session) loses its completion.
 */
export const ORDER_FAULT_NAMES = ['crashAfterCommit', 'recycleAfterCommit'] as const;
export type OrderFaultName = (typeof ORDER_FAULT_NAMES)[number];
/**
 * Outages, `name=seconds` (local/outages.ts): a dependency down for that long, from a seeded moment;
 * `authorizationDelay`, the app's roles not in effect for that long from the run's start.
 */
export const OUTAGE_NAMES = ['storeOutage', 'sendOutage', 'durableOutage', 'authorizationDelay'] as const;
export type OutageName = (typeof OUTAGE_NAMES)[number];
/**
 * A probability per fault, a duration in seconds per outage, and the orders a fault is aimed at
 * (`at`, from `name@ORDER`).
 */
export type FaultSpec = Partial<Record<FaultName, number> & Record<OutageName, number>> & {
  at?: Partial<Record<OrderFaultName, string[]>>;
};
/** The longest outage a run may ask for: a day. */
export const MAX_OUTAGE_SECONDS = 86_400;

/** mulberry32: small, fast, good enough to draw faults; not for anything secret. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One independent stream per fault or outage, for draws made once per run (an outage's start). */
export function faultRandom(seed: number, fault: FaultName | OutageName): () => number {
  // Outages count from 101, so that a fault added to FAULT_NAMES moves no outage's draws.
  const outage = (OUTAGE_NAMES as readonly string[]).indexOf(fault);
  const offset = outage >= 0 ? 101 + outage : (FAULT_NAMES as readonly string[]).indexOf(fault) + 1;
  return seededRandom((seed ^ Math.imul(offset, 0x9e3779b1)) >>> 0);
}

/** A plain decimal (`0.25`, `2`), else NaN: none of the exponents, hex, signs or blanks `Number` takes. */
export function parseFaults(spec: string): FaultSpec {
  const faults: FaultSpec = {};
  if (spec.trim() === '') return faults;
  for (const part of spec.split(',')) {
    const aimed = /^\s*(\w+)@(.*)$/s.exec(part);
    if (aimed !== null) {
      addAimed(faults, aimed[1], aimed[2], part);
      continue;
    }
    const [name, value, ...rest] = part.split('=').map((piece) => piece.trim());
    if (Object.hasOwn(faults, name)) {
      throw new Error(`--faults: ${name} is given twice; give each fault once`);
    }
    if ((OUTAGE_NAMES as readonly string[]).includes(name)) {
      const seconds = decimalNumber(value);
      if (
        rest.length > 0 ||
        value === undefined ||
        value === '' ||
        !(seconds >= 0 && seconds <= MAX_OUTAGE_SECONDS)
      ) {
        throw new Error(
          `--faults: ${name} needs a duration in seconds between 0 and ${MAX_OUTAGE_SECONDS}, e.g. ${name}=30, got ${JSON.stringify(part)}`,
        );
      }
      faults[name as OutageName] = seconds;
      continue;
    }
    if (!(FAULT_NAMES as readonly string[]).includes(name)) {
      throw new Error(
        `--faults: unknown fault ${JSON.stringify(name)}; known: ${[...FAULT_NAMES, ...OUTAGE_NAMES].join(', ')}`,
      );
    }
    const probability = decimalNumber(value);
    if (rest.length > 0 || value === undefined || value === '' || !(probability >= 0 && probability <= 1)) {
      throw new Error(
        `--faults: ${name} needs a probability between 0 and 1, e.g. ${name}=0.1, got ${JSON.stringify(part)}`,
      );
    }
    faults[name as FaultName] = probability;
  }
  return faults;
}

/** `name@ORDER`: an order id is taken as written (no trim: ids are data), once per fault. */
function addAimed(faults: FaultSpec, name: string, orderId: string, part: string): void {
  if (!(ORDER_FAULT_NAMES as readonly string[]).includes(name)) {
    throw new Error(
      `--faults: only ${ORDER_FAULT_NAMES.join(' and ')} can be aimed at an order (name@ORDER), got ${JSON.stringify(part)}`,
    );
  }
  if (orderId === '') throw new Error(`--faults: ${name}@ needs an order id, e.g. ${name}@O-26`);
  const at = (faults.at ??= {});
  const orders = (at[name as OrderFaultName] ??= []);
  if (orders.includes(orderId)) throw new Error(`--faults: ${name}@${orderId} is given twice; give it once`);
  orders.push(orderId);
}

/**
 * A store whose calls fail, before reaching it, with a retryable error at the given probability.
 *
 * Each call draws for itself: the key names the container, the partition, the operation, the
 * documents it names and its attempt, how many calls of that operation on that partition came before
 * it. Calls of one partition come from one order's session, one at a time, so that count does not
 * depend on how the sessions interleave, and one seed fails the same calls in every run. (Counted per
 * partition and operation, not per document: a few numbers an order, where one per document would
 * be one per transaction record.)
 */
export function withTransientFaults(
  container: DocumentContainer,
  probability: number,
  draw: (key: string) => number,
): DocumentContainer & { injected: () => number } {
  let injected = 0;
  const attempts = new Map<string, number>();
  const maybeFail = (operation: string, call: ContainerCall): void => {
    if (probability <= 0) return;
    const counted = `${container.name}\u0000${call.partitionKey ?? '*'}\u0000${operation}`;
    const attempt = (attempts.get(counted) ?? 0) + 1;
    attempts.set(counted, attempt);
    if (draw(`${counted}\u0000${targetOf(call)}\u0000${attempt}`) < probability) {
      injected += 1;
      throw new TransientError(
        'store-throttled',
        `injected transient fault on ${container.name}.${operation}`,
      );
    }
  };
  return { ...checkedContainer(container, maybeFail), injected: () => injected };
}

/**
 * A producer whose sends for one order reach the broker out of order: with the given probability a
 * message is held back and reaches the broker after the next send to its queue (or at `flush`), so
 * later entries of its order overtake it.
 *
 * What is held is taken and added synchronously, before any await: with several producers sending
 * at once, a message held back while another send was in flight is never overwritten (the fault
 * must reorder, never lose).
 *
 * Which messages are held is drawn per message, from its queue and messageId, never from how many
 * sends came before: a message sent again (its ledger message delivered again) is held again, and
 * one seed holds the same messages in every run.
 */
export function withReorderFaults(
  sender: MessageSender,
  probability: number,
  draw: (key: string) => number,
): MessageSender & { reordered: () => number; flush: () => Promise<boolean> } {
  let reordered = 0;
  const held = new Map<string, OutgoingMessage[]>();
  const take = (queue: string): OutgoingMessage[] => {
    const late = held.get(queue) ?? [];
    held.delete(queue);
    return late;
  };
  const hold = (queue: string, messages: OutgoingMessage[]): void => {
    if (messages.length === 0) return;
    const already = held.get(queue);
    if (already) already.push(...messages);
    else held.set(queue, messages);
  };
  return {
    reordered: () => reordered,
    async send(queue, messages) {
      const now: OutgoingMessage[] = [];
      const later: OutgoingMessage[] = [];
      for (const message of messages) {
        const late = probability > 0 && draw(`${queue}\u0000${message.messageId}`) < probability;
        (late ? later : now).push(message);
      }
      reordered += later.length;
      const late = take(queue);
      hold(queue, later);
      // A refused send must not drop what an earlier call held back: it is held again.
      try {
        if (now.length > 0) await sender.send(queue, now);
        if (late.length > 0) await sender.send(queue, late);
      } catch (error) {
        hold(queue, late);
        throw error;
      }
    },
    async flush() {
      const queues = [...held.keys()];
      const batches = queues.map((queue) => [queue, take(queue)] as const);
      for (const [queue, late] of batches) {
        try {
          await sender.send(queue, late);
        } catch (error) {
          hold(queue, late);
          throw error;
        }
      }
      return queues.length > 0;
    },
  };
}

/**
 * A seeded draw in [0, 1) that is a function of the seed, the fault and a key naming what it is drawn
 * for (a message, an invocation), never of how many draws came before: concurrent work draws in any
 * order, and one seed still injects the same faults.
 */
export function keyedRandom(seed: number, fault: FaultName): (key: string) => number {
  return (key) =>
    createHash('sha256').update(`${seed}\u0000${fault}\u0000${key}`).digest().readUInt32BE(0) / 4294967296;
}
