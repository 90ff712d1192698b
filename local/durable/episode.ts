/**
 * The Durable extension's side of an episode, as data: given the new event and the actions the SDK
 * returned, which history events to record and which work to start. The driver carries the
 * decisions out. Task ids must match the ones the SDK assigns while replaying: it numbers each
 * scheduled activity or timer in order, and gives a retry's backoff timer and next attempt the next
 * number at the moment it reads the failure or the timer, before the orchestrator code resumes.
 */
import { HistoryEventType, taskScheduled, timerCreated, type HistoryEvent } from './history';
import { takesTaskId, type FlatActions, type OrchestratorAction, type RetryPolicy } from './sdk';

interface RetryState {
  name: string;
  input: unknown;
  policy: RetryPolicy;
  /** The attempt that is running or that just failed, from 1. */
  attempt: number;
}

interface EventWaits {
  /** Waits not yet satisfied, by name; the SDK hands an event to the latest open wait (a stack). */
  open: Map<string, number[]>;
  /** Events raised before anything waited for them, by name; the next wait takes one. */
  buffered: Map<string, number>;
  satisfied: Set<number>;
}

/** What the driver keeps per orchestration run to stay in step with the SDK's replay. */
export interface ReplayBook {
  nextTaskId: number;
  /** Leaves already carried out, as signatures, to detect a non-deterministic replay. */
  knownLeaves: string[];
  knownTops: number;
  /** Leaf index of each timer to its task id, to see a cancellation. */
  timerLeaves: Map<number, number>;
  retryAttempts: Map<number, RetryState>;
  /** Pending backoff timers: the instance is making progress on its own while any is pending. */
  retryTimers: Map<number, RetryState>;
  waits: EventWaits;
  /** The latest yield includes a wait for an event that has not come: a person is expected. */
  liveWait: boolean;
}

export type Effect =
  | { kind: 'runActivity'; taskId: number; name: string; input: unknown }
  | { kind: 'startTimer'; timerId: number; fireAt: number }
  | { kind: 'cancelTimer'; timerId: number };

export interface Decisions {
  /** History events recorded in this episode after the new event. */
  events: HistoryEvent[];
  /** Work to start once the episode is recorded. */
  effects: Effect[];
}

export type ActionDecisions =
  { error: string } | (Decisions & { continueAsNew: { input: unknown } | undefined });

export function newReplayBook(): ReplayBook {
  return {
    nextTaskId: 0,
    knownLeaves: [],
    knownTops: 0,
    timerLeaves: new Map(),
    retryAttempts: new Map(),
    retryTimers: new Map(),
    waits: { open: new Map(), buffered: new Map(), satisfied: new Set() },
    liveWait: false,
  };
}

/** The extension's retry interceptor: first interval times the coefficient per failed attempt, capped. */
export function retryDelayMs(policy: RetryPolicy, failedAttempt: number): number {
  const delay =
    policy.firstRetryIntervalInMilliseconds * (policy.backoffCoefficient ?? 1) ** (failedAttempt - 1);
  const cap = policy.maxRetryIntervalInMilliseconds;
  return cap !== undefined && cap > 0 ? Math.min(delay, cap) : delay;
}

function signature(action: OrchestratorAction): string {
  switch (action.kind) {
    case 'activity':
    case 'event':
      return `${action.kind}:${action.name}`;
    case 'unsupported':
      return `unsupported:${String(action.actionType)}`;
    default:
      return action.kind;
  }
}

/** An event goes to the latest open wait for its name, else it is kept for the next such wait. */
function deliverEvent(waits: EventWaits, name: string): void {
  const leaf = waits.open.get(name)?.pop();
  if (leaf !== undefined) waits.satisfied.add(leaf);
  else waits.buffered.set(name, (waits.buffered.get(name) ?? 0) + 1);
}

function trackWait(waits: EventWaits, name: string, leaf: number): void {
  const buffered = waits.buffered.get(name) ?? 0;
  if (buffered > 0) {
    waits.buffered.set(name, buffered - 1);
    waits.satisfied.add(leaf);
    return;
  }
  const open = waits.open.get(name) ?? [];
  open.push(leaf);
  waits.open.set(name, open);
}

/** What the extension does for the new event before the orchestrator runs: retries, event hand-over. */
export function decideOnEvent(book: ReplayBook, event: HistoryEvent, at: number): Decisions {
  const decisions: Decisions = { events: [], effects: [] };
  switch (event.EventType) {
    case HistoryEventType.TaskCompleted:
      book.retryAttempts.delete(event.TaskScheduledId);
      break;
    case HistoryEventType.TaskFailed: {
      const retry = book.retryAttempts.get(event.TaskScheduledId);
      if (!retry) break;
      book.retryAttempts.delete(event.TaskScheduledId);
      const timerId = book.nextTaskId++;
      const fireAt = at + retryDelayMs(retry.policy, retry.attempt);
      book.retryTimers.set(timerId, retry);
      decisions.events.push(timerCreated(at, timerId, fireAt));
      decisions.effects.push({ kind: 'startTimer', timerId, fireAt });
      break;
    }
    case HistoryEventType.TimerFired: {
      const retry = book.retryTimers.get(event.TimerId);
      book.retryTimers.delete(event.TimerId);
      // After the last attempt's timer the SDK throws the failure into the orchestrator instead.
      if (!retry || retry.attempt >= retry.policy.maxNumberOfAttempts) break;
      const taskId = book.nextTaskId++;
      const next: RetryState = { ...retry, attempt: retry.attempt + 1 };
      book.retryAttempts.set(taskId, next);
      decisions.events.push(taskScheduled(at, taskId, next.name, next.input));
      decisions.effects.push({ kind: 'runActivity', taskId, name: next.name, input: next.input });
      break;
    }
    case HistoryEventType.EventRaised:
      deliverEvent(book.waits, event.Name);
      break;
    default:
      break;
  }
  return decisions;
}

/** The new actions of an episode the orchestrator survived, and the cancellations it made. */
export function decideOnActions(book: ReplayBook, actions: FlatActions, at: number): ActionDecisions {
  const { leaves, tops } = actions;
  const replayed = leaves.slice(0, book.knownLeaves.length).map(signature);
  if (leaves.length < book.knownLeaves.length || replayed.some((s, i) => s !== book.knownLeaves[i])) {
    return {
      error: `Non-deterministic workflow detected: the replay scheduled [${replayed.join(', ')}], not [${book.knownLeaves.join(', ')}]`,
    };
  }
  const decisions: Decisions = { events: [], effects: [] };
  let continueAsNew: { input: unknown } | undefined;
  for (let index = book.knownLeaves.length; index < leaves.length; index++) {
    const action = leaves[index];
    book.knownLeaves.push(signature(action));
    const taskId = takesTaskId(action) ? book.nextTaskId++ : -1;
    switch (action.kind) {
      case 'activity':
        decisions.events.push(taskScheduled(at, taskId, action.name, action.input));
        if (action.retry) {
          book.retryAttempts.set(taskId, {
            name: action.name,
            input: action.input,
            policy: action.retry,
            attempt: 1,
          });
        }
        decisions.effects.push({ kind: 'runActivity', taskId, name: action.name, input: action.input });
        break;
      case 'timer':
        book.timerLeaves.set(index, taskId);
        decisions.events.push(timerCreated(at, taskId, action.fireAt));
        if (!action.isCanceled)
          decisions.effects.push({ kind: 'startTimer', timerId: taskId, fireAt: action.fireAt });
        break;
      case 'continueAsNew':
        continueAsNew = { input: action.input };
        break;
      case 'unsupported':
        return {
          error: `action type ${String(action.actionType)} is not supported by the embedded durable driver`,
        };
      default:
        break;
    }
  }
  for (const top of tops.slice(book.knownTops)) {
    for (const leaf of top) {
      const action = leaves[leaf];
      if (action.kind === 'event') trackWait(book.waits, action.name, leaf);
    }
  }
  book.knownTops = tops.length;
  // A timer the orchestrator cancelled (the loser of a Task.any) is no longer waited for.
  for (const [leaf, timerId] of book.timerLeaves) {
    const action = leaves[leaf];
    if (action.kind === 'timer' && action.isCanceled) {
      decisions.effects.push({ kind: 'cancelTimer', timerId });
      book.timerLeaves.delete(leaf);
    }
  }
  const latest = tops[tops.length - 1] ?? [];
  book.liveWait = latest.some((leaf) => leaves[leaf].kind === 'event' && !book.waits.satisfied.has(leaf));
  return { ...decisions, continueAsNew };
}
