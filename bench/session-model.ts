/**
 * What the session settings of host.json cost an instance, in virtual time: a model of the
 * Service Bus extension's session processor, run as a discrete-event simulation so that a table of
 * many `sessionIdleTimeout` x `maxConcurrentSessions` cells costs milliseconds, not minutes of
 * real waiting (a 1 s hold times 512 orders is 64 s of wall time per cell on the embedded host).
 *
 * What it copies from Azure (azure-sdk-for-net, sdk/servicebus/Azure.Messaging.ServiceBus/src/Processor/):
 * - `ServiceBusSessionProcessorOptions.cs`: at most `MaxConcurrentSessions` sessions at once, one
 *   call at a time per session (`MaxConcurrentCallsPerSession` 1); `SessionIdleTimeout` becomes the
 *   receive wait (`MaxReceiveWaitTime`), must be positive when set, and unset means the try timeout
 *   (60 s; NOTES-RUNTIME, extension `ServiceBusOptions`).
 * - `SessionReceiverManager.cs`: a slot accepts the next available session (a call to Service Bus:
 *   one round trip here), receives from it until a receive waits the idle timeout for nothing, then
 *   closes it and accepts another. A drained session therefore holds its slot for the idle timeout.
 * What it copies from this app's bench: an entry holds its slot for three round trips, its receive,
 * its store batch (the convoy's measured 1.00 per first delivery) and its completion
 * (./session-table `ROUND_TRIPS_PER_ENTRY`); its CPU time is left out, so the model is an upper bound.
 */

export interface SessionModelSettings {
  maxConcurrentSessions: number;
  /** host.json `sessionIdleTimeout`; 0 closes a session the moment it is drained (the embedded host only). */
  sessionIdleTimeoutMs: number;
  /** What accepting a session costs: one Service Bus round trip. */
  acceptMs: number;
  /** What one entry holds its slot for: its receive, store and completion round trips times their latency. */
  handlerMs: number;
}

/** When each message of each session arrives, ms from the start; each session's list ascending. */
export type SessionArrivals = ReadonlyMap<string, readonly number[]>;

export interface SessionModelResult {
  /** Last message handled, ms from the start. */
  makespanMs: number;
  messages: number;
  accepts: number;
  /** Slot time spent holding a drained session, summed over slots. */
  heldIdleMs: number;
  /** Slot time spent handling messages, summed over slots. */
  handlingMs: number;
  /** Arrival to handled, per message, ascending. */
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
  | { kind: 'holding'; session: Session; idleSince: number }
  | { kind: 'handling'; session: Session };

export function simulateSessions(
  arrivals: SessionArrivals,
  settings: SessionModelSettings,
): SessionModelResult {
  const { maxConcurrentSessions, sessionIdleTimeoutMs, acceptMs, handlerMs } = settings;
  if (maxConcurrentSessions < 1 || sessionIdleTimeoutMs < 0 || acceptMs < 0 || handlerMs < 0) {
    throw new RangeError('the session model needs at least 1 session and no negative time');
  }
  const sessions = [...arrivals].map(([id, times]): Session => ({
    id,
    arrivals: times,
    next: 0,
    held: false,
  }));
  const events = new EventQueue();
  const slots: SlotState[] = Array.from({ length: maxConcurrentSessions }, () => ({ kind: 'waiting' }));
  const result: SessionModelResult = {
    makespanMs: 0,
    messages: 0,
    accepts: 0,
    heldIdleMs: 0,
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

  const step = (slot: number, now: number): void => {
    const state = slots[slot];
    if (state.kind === 'waiting') {
      const session = nextAvailable();
      if (session === undefined) return; // woken by the next arrival of an unheld session
      session.held = true;
      result.accepts += 1;
      result.acceptLog.push({ sessionId: session.id, atMs: now });
      slots[slot] = { kind: 'accepting', session };
      events.push({ atMs: now + acceptMs, slot });
      return;
    }
    if (state.kind === 'accepting' || state.kind === 'handling') {
      slots[slot] = { kind: 'holding', session: state.session, idleSince: now };
      step(slot, now);
      return;
    }
    // Holding: handle the next message if it is there, wait for it if it comes within the idle
    // timeout, else close the session once the timeout has passed and accept another.
    const { session, idleSince } = state;
    const next = session.arrivals[session.next];
    const closesAt = idleSince + sessionIdleTimeoutMs;
    if (next !== undefined && next <= now) {
      result.heldIdleMs += now - idleSince;
      session.next += 1;
      result.messages += 1;
      result.handlingMs += handlerMs;
      result.waitsMs.push(now + handlerMs - next);
      result.makespanMs = Math.max(result.makespanMs, now + handlerMs);
      slots[slot] = { kind: 'handling', session };
      events.push({ atMs: now + handlerMs, slot });
    } else if (next !== undefined && next <= closesAt) {
      events.push({ atMs: next, slot });
    } else if (now >= closesAt) {
      result.heldIdleMs += closesAt - idleSince;
      session.held = false;
      slots[slot] = { kind: 'waiting' };
      // Its next message arrives later (else the slot would have waited for it): its arrival
      // makes the session available again.
      step(slot, now);
    } else {
      events.push({ atMs: closesAt, slot });
    }
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
