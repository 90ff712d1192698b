/**
 * What the session settings of host.json cost an instance, in virtual time: a model of the
 * Service Bus extension's session processor, run as a discrete-event simulation so that a table of
 * many settings costs milliseconds, not minutes of real waiting (a 1 s hold times 512 orders is
 * 64 s of wall time per cell on the embedded host).
 *
 * What it copies from Azure (azure-sdk-for-net):
 * - The extension hands host.json's `prefetchCount`, `maxConcurrentSessions`, `sessionIdleTimeout`
 *   and `maxAutoLockRenewalDuration` to one session processor per function
 *   (`Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Config/ServiceBusOptions.cs`,
 *   `ToSessionProcessorOptions`, called from `Listeners/ServiceBusListener.cs`).
 * - `Azure.Messaging.ServiceBus/src/Processor/ServiceBusSessionProcessorOptions.cs`: at most
 *   `MaxConcurrentSessions` sessions at once, one call at a time per session
 *   (`MaxConcurrentCallsPerSession` 1); `SessionIdleTimeout` becomes the receive wait
 *   (`MaxReceiveWaitTime`), must be positive when set, and unset means the try timeout (60 s).
 * - `Processor/SessionReceiverManager.cs`: a slot accepts the next available session (a call to
 *   Service Bus), receives from it until a receive waits the idle timeout for nothing, then closes
 *   it and accepts another. A drained session therefore holds its slot for the idle timeout.
 *   `Processor/ReceiverManager.cs` (`ProcessOneMessage`): the function runs, then the processor
 *   completes the message (a round trip) before it receives the next one.
 * - Prefetch: the session's receiver is created with `PrefetchCount`
 *   (`ReceiverManager`'s receiver options), so the broker pushes up to that many of the session's
 *   messages into a local buffer without a receive being asked for, and refills it as the
 *   function takes them; a receive is served from the buffer at once when a message is there
 *   (Microsoft Learn, "Prefetch Azure Service Bus messages",
 *   https://learn.microsoft.com/azure/service-bus-messaging/service-bus-prefetch). A session
 *   receiver prefetches only the session it holds, so its buffered messages are locked with the
 *   session (azure-sdk-for-net issue 18350).
 * The model, conservatively: with `prefetchCount` 0 every message costs a receive round trip once
 * it has reached the broker; with prefetch, message i is in the buffer one round trip after both
 * its arrival and the credit for it (the accept's end for the first `prefetchCount` after an
 * accept, else the moment message i - prefetchCount was taken from the buffer). Handler CPU time is
 * left out, so the model is an upper bound.
 */

export interface SessionModelSettings {
  maxConcurrentSessions: number;
  /** host.json `sessionIdleTimeout`; 0 closes a session the moment it is drained (the embedded host only). */
  sessionIdleTimeoutMs: number;
  /** host.json `prefetchCount`: messages the broker pushes into a session's buffer before they are asked for; 0 none. */
  prefetchCount: number;
  /** What accepting a session costs: one Service Bus round trip. */
  acceptMs: number;
  /** A receive round trip (prefetch 0), or the push of a prefetched message into the buffer. */
  receiveMs: number;
  /** What the function holds its slot for once it has the message: its store batch. */
  handlerMs: number;
  /** The completion the processor makes after the function returns: one Service Bus round trip. */
  completeMs: number;
}

/** When each message of each session arrives, ms from the start; each session's list ascending. */
export type SessionArrivals = ReadonlyMap<string, readonly number[]>;

export interface SessionModelResult {
  /** Last message handled (completed), ms from the start. */
  makespanMs: number;
  messages: number;
  accepts: number;
  /** Slot time spent holding a drained session (nothing had reached the broker), summed over slots. */
  heldIdleMs: number;
  /** Slot time spent waiting for a message the broker had: its receive round trip, or the rest of its push. */
  receivingMs: number;
  /** Slot time spent in the function and the completion after it, summed over slots. */
  handlingMs: number;
  /** Arrival to completed, per message, ascending. */
  waitsMs: number[];
  /** Every accept in order: which session, when it began (for tests and traces). */
  acceptLog: Array<{ sessionId: string; atMs: number }>;
}

interface Session {
  id: string;
  arrivals: readonly number[];
  /** Index of the next message not yet handled. */
  next: number;
  held: boolean;
  /** When each message was taken from the buffer by the function (its credit goes back then). */
  takenAt: number[];
  /** The first message of the current hold, and when its accept ended (the link's first credit). */
  firstOfHold: number;
  acceptedAt: number;
}

interface Event {
  atMs: number;
  order: number;
  slot?: number;
  /** A wake of a waiting slot (ignored if it took a session meanwhile), not the end of what it does. */
  wake?: true;
  session?: Session;
}

/** A binary min-heap by time, then by insertion order, so that ties resolve deterministically. */
class EventQueue {
  private readonly heap: Event[] = [];
  private counter = 0;
  push(event: Omit<Event, 'order'>): void {
    this.heap.push({ ...event, order: this.counter++ });
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(this.heap[i], this.heap[parent])) break;
      [this.heap[i], this.heap[parent]] = [this.heap[parent], this.heap[i]];
      i = parent;
    }
  }
  pop(): Event | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (top === undefined || last === undefined || this.heap.length === 0) return top;
    this.heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < this.heap.length && this.before(this.heap[left], this.heap[least])) least = left;
      if (right < this.heap.length && this.before(this.heap[right], this.heap[least])) least = right;
      if (least === i) return top;
      [this.heap[i], this.heap[least]] = [this.heap[least], this.heap[i]];
      i = least;
    }
  }
  private before(a: Event, b: Event): boolean {
    return a.atMs < b.atMs || (a.atMs === b.atMs && a.order < b.order);
  }
}

type SlotState =
  | { kind: 'waiting' }
  | { kind: 'accepting'; session: Session }
  | { kind: 'handling'; session: Session }
  | { kind: 'closing'; session: Session };

export function simulateSessions(
  arrivals: SessionArrivals,
  settings: SessionModelSettings,
): SessionModelResult {
  const { maxConcurrentSessions, sessionIdleTimeoutMs, prefetchCount } = settings;
  const { acceptMs, receiveMs, handlerMs, completeMs } = settings;
  if (
    maxConcurrentSessions < 1 ||
    !Number.isInteger(prefetchCount) ||
    prefetchCount < 0 ||
    [sessionIdleTimeoutMs, acceptMs, receiveMs, handlerMs, completeMs].some((ms) => ms < 0)
  ) {
    throw new RangeError(
      'the session model needs at least 1 session, a prefetch count of 0 or more, and no negative time',
    );
  }
  const sessions = [...arrivals].map(([id, times]): Session => ({
    id,
    arrivals: times,
    next: 0,
    held: false,
    takenAt: [],
    firstOfHold: 0,
    acceptedAt: 0,
  }));
  const events = new EventQueue();
  const slots: SlotState[] = Array.from({ length: maxConcurrentSessions }, () => ({ kind: 'waiting' }));
  const result: SessionModelResult = {
    makespanMs: 0,
    messages: 0,
    accepts: 0,
    heldIdleMs: 0,
    receivingMs: 0,
    handlingMs: 0,
    waitsMs: [],
    acceptLog: [],
  };
  for (const session of sessions) {
    for (const at of session.arrivals) events.push({ atMs: at, session });
  }
  const wakePending = slots.map(() => true);
  for (let slot = 0; slot < slots.length; slot++) events.push({ atMs: 0, slot, wake: true });

  // Available sessions (unheld, a message arrived) by their first waiting message: the next accept.
  const ready = new EventQueue();
  const inReady = new Set<Session>();
  const makeReady = (session: Session): void => {
    const first = session.arrivals[session.next];
    if (session.held || inReady.has(session) || first === undefined) return;
    inReady.add(session);
    ready.push({ atMs: first, session });
  };
  const nextAvailable = (): Session | undefined => {
    const taken = ready.pop()?.session;
    if (taken !== undefined) inReady.delete(taken);
    return taken;
  };

  /**
   * When the function can have message `index`, asked for at `askedAt` (the slot's last
   * completion): a receive round trip after it reached the broker, or with prefetch one round trip
   * after both its arrival and its credit, however long before it was asked for.
   */
  const deliveredAt = (session: Session, index: number, askedAt: number): number => {
    const arrival = session.arrivals[index];
    if (prefetchCount === 0) return Math.max(askedAt, arrival) + receiveMs;
    const creditFrom = index - prefetchCount;
    const credit =
      creditFrom < session.firstOfHold ? session.acceptedAt : (session.takenAt[creditFrom] ?? askedAt);
    return Math.max(askedAt, Math.max(arrival, credit) + receiveMs);
  };

  const step = (slot: number, now: number): void => {
    const state = slots[slot];
    if (state.kind === 'waiting') {
      const session = nextAvailable();
      if (session === undefined) return; // woken by the next arrival of an unheld session
      session.held = true;
      session.firstOfHold = session.next;
      result.accepts += 1;
      result.acceptLog.push({ sessionId: session.id, atMs: now });
      slots[slot] = { kind: 'accepting', session };
      events.push({ atMs: now + acceptMs, slot });
      return;
    }
    if (state.kind === 'accepting') state.session.acceptedAt = now;
    if (state.kind === 'closing') {
      state.session.held = false;
      slots[slot] = { kind: 'waiting' };
      // Its next message arrives later (else the slot would have received it): its arrival makes
      // the session available again.
      step(slot, now);
      return;
    }
    // Accepted, or the last message completed: the receive that follows either gets the next
    // message, because it reached the broker within the idle timeout, or returns nothing at the
    // timeout and the session closes.
    const { session } = state;
    const index = session.next;
    const arrival = session.arrivals[index];
    const closesAt = now + sessionIdleTimeoutMs;
    if (arrival === undefined || arrival > closesAt) {
      result.heldIdleMs += sessionIdleTimeoutMs;
      slots[slot] = { kind: 'closing', session };
      events.push({ atMs: closesAt, slot });
      return;
    }
    const start = deliveredAt(session, index, now);
    result.heldIdleMs += Math.max(0, arrival - now);
    result.receivingMs += start - Math.max(now, arrival);
    session.takenAt[index] = start;
    session.next += 1;
    result.messages += 1;
    const done = start + handlerMs + completeMs;
    result.handlingMs += handlerMs + completeMs;
    result.waitsMs.push(done - arrival);
    result.makespanMs = Math.max(result.makespanMs, done);
    slots[slot] = { kind: 'handling', session };
    events.push({ atMs: done, slot });
  };

  const wakeWaiting = (now: number): void => {
    const waiting = slots.findIndex((state, slot) => state.kind === 'waiting' && !wakePending[slot]);
    if (waiting < 0) return;
    wakePending[waiting] = true;
    events.push({ atMs: now, slot: waiting, wake: true });
  };

  for (let event = events.pop(); event !== undefined; event = events.pop()) {
    if (event.slot !== undefined && event.wake === true) {
      wakePending[event.slot] = false;
      if (slots[event.slot].kind === 'waiting') step(event.slot, event.atMs);
    } else if (event.slot !== undefined) step(event.slot, event.atMs);
    else if (event.session !== undefined && !event.session.held) {
      makeReady(event.session);
      wakeWaiting(event.atMs);
    }
  }
  result.waitsMs.sort((a, b) => a - b);
  return result;
}
