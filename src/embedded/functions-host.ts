/**
 * The embedded Functions host for Service Bus triggers: runs the app's `ServiceBusQueueFunction`
 * definitions against the embedded broker as the Azure Functions host does with host.json
 * `extensions.serviceBus` settings: session pumps up to `maxConcurrentSessions`, one message at a
 * time per session, `autoCompleteMessages` settlement (return completes, throw abandons), and lock
 * renewal while a handler runs.
 */
import { randomUUID } from 'node:crypto';
import { format } from 'node:util';
import { InvocationContext, trigger } from '@azure/functions';
import type { FunctionInput, LogLevel, ServiceBusQueueTrigger, TriggerMetadata } from '@azure/functions';
import type { ServiceBusQueueFunction } from '../functions/definition';
import type { EmbeddedBroker, ReceivedMessage, SessionReceiver } from './broker/broker';

const DEFAULT_MAX_CONCURRENT_SESSIONS = 8;
/** host.json's default is 16 per CPU; one local process needs no more than 16. */
const DEFAULT_MAX_CONCURRENT_CALLS = 16;
/** Short locally, so that a pump soon moves on to another session. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 100;

export type HostLog = (functionName: string, level: LogLevel, message: string) => void;

export interface FunctionsHostFaults {
  /** Probability that, after the handler returned, its completion is lost (a crash after commit). */
  crashAfterCommit?: number;
}

export interface FunctionsHostOptions {
  broker: EmbeddedBroker;
  functions: readonly ServiceBusQueueFunction[];
  maxConcurrentSessions?: number;
  maxConcurrentCalls?: number;
  sessionIdleTimeoutMs?: number;
  random?: () => number;
  faults?: FunctionsHostFaults;
  log?: HostLog;
  /**
   * The value of a secondary input (`definition.extraInputs`, e.g. the durable client) for one
   * invocation, as the Azure host would bind it; without it those inputs stay unset.
   */
  resolveExtraInput?: (input: FunctionInput, functionName: string) => unknown;
}

export interface FunctionStats {
  invocations: number;
  succeeded: number;
  failed: number;
  crashesInjected: number;
  /** Most sessions held at once. */
  maxConcurrentSessions: number;
  activeSessions: number;
}

export interface FunctionsHostStats extends FunctionStats {
  byFunction: Record<string, FunctionStats>;
}

export interface FunctionsHost {
  start(): void;
  /** Stops receiving and waits for the handlers in flight to finish and be settled. */
  stop(): Promise<void>;
  /**
   * Resolves once the queues this host serves hold no message (available, in flight, or locked
   * awaiting expiry) and no handler runs; work that handlers send meanwhile is waited for too.
   * Rejects if the host is stopped first.
   */
  whenIdle(): Promise<void>;
  stats(): FunctionsHostStats;
}

type Outcome = 'succeeded' | 'failed';

/** Where a message is settled: its session receiver, or the broker for queues without sessions. */
interface Settlement {
  complete(message: ReceivedMessage): void;
  abandon(message: ReceivedMessage): void;
}

function emptyFunctionStats(): FunctionStats {
  return {
    invocations: 0,
    succeeded: 0,
    failed: 0,
    crashesInjected: 0,
    maxConcurrentSessions: 0,
    activeSessions: 0,
  };
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return format(error);
}

const defaultLog: HostLog = (functionName, level, message) => {
  if (level === 'warning' || level === 'error' || level === 'critical') {
    console.error(`[${functionName}] ${level}: ${message}`);
  }
};

/** The Node worker camel-cases every key of the trigger metadata, nested ones included. */
function camelCaseKeys(record: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    const first = key.charAt(0);
    const lower = first.toLowerCase();
    result[lower === first ? key : lower + key.slice(1)] = record[key];
  }
  return result;
}

/**
 * What the Service Bus extension binds for one message (`ServiceBusTriggerBindingStrategy`), as the
 * Node worker hands it over: keys camel-cased, dates as ISO strings. Fields the broker does not model
 * (expiry, replyTo, partition keys, dead-letter source) are left out.
 */
export function serviceBusTriggerMetadata(message: ReceivedMessage): TriggerMetadata {
  const enqueued = new Date(message.enqueuedTimeUtc).toISOString();
  const applicationProperties = camelCaseKeys(message.applicationProperties);
  const metadata: TriggerMetadata = { messageId: message.messageId };
  // Absent fields are left out rather than deleted afterwards, which would slow every later lookup.
  if (message.sessionId !== undefined) metadata.sessionId = message.sessionId;
  metadata.deliveryCount = message.deliveryCount;
  metadata.sequenceNumber = message.sequenceNumber;
  metadata.enqueuedTimeUtc = enqueued;
  metadata.enqueuedTime = enqueued;
  if (message.correlationId !== undefined) metadata.correlationId = message.correlationId;
  if (message.contentType !== undefined) metadata.contentType = message.contentType;
  if (message.subject !== undefined) {
    metadata.subject = message.subject;
    metadata.label = message.subject;
  }
  metadata.lockToken = message.lockToken;
  metadata.applicationProperties = applicationProperties;
  metadata.userProperties = { ...applicationProperties };
  return metadata;
}

/**
 * A pump lets the event loop turn between deliveries whose handler did not, as the real host's
 * next receive is network I/O. Otherwise a pump whose handler never waits on a timer (the ledger
 * processor's, or any at zero store latency) works through its whole backlog in one turn, and
 * every timer waits: the other pumps' store round trips, and lock renewal. A handler that did
 * wait (on a store round trip) goes straight on, so the turn costs nothing where none is needed.
 */
let loopTurns = 0;
let turnWatched = false;

/** The turns counted so far; the next one the event loop takes will count. */
function currentTurn(): number {
  if (!turnWatched) {
    turnWatched = true;
    setImmediate(() => {
      turnWatched = false;
      loopTurns += 1;
    });
  }
  return loopTurns;
}

async function turnSince(turn: number): Promise<void> {
  if (loopTurns !== turn) return;
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Invocation ids as the host's: GUID-shaped and unique, here a random prefix per host and a
 * counter, which costs a fraction of a `randomUUID` for every message.
 */
function invocationIds(): () => string {
  const prefix = randomUUID().slice(0, 24);
  let counter = 0;
  return () => {
    counter += 1;
    return prefix + counter.toString(16).padStart(12, '0');
  };
}

/** Renew well before the lock runs out, as the host's auto lock renewal does. */
function renewalIntervalMs(lockDurationMs: number): number {
  return Math.max(1, Math.floor(lockDurationMs / 3));
}

export function createFunctionsHost(options: FunctionsHostOptions): FunctionsHost {
  const { broker, functions } = options;
  const maxConcurrentSessions = options.maxConcurrentSessions ?? DEFAULT_MAX_CONCURRENT_SESSIONS;
  const maxConcurrentCalls = options.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS;
  const sessionIdleTimeoutMs = options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS;
  const random = options.random ?? Math.random;
  const crashProbability = options.faults?.crashAfterCommit ?? 0;
  const log = options.log ?? defaultLog;
  const servedQueues = [...new Set(functions.map((definition) => definition.queueName))];
  const nextInvocationId = invocationIds();
  // What every invocation of one function shares: built once, not per message.
  const perFunction = new Map(
    functions.map((definition) => [
      definition,
      {
        extraInputs: definition.extraInputs ?? [],
        logHandler: (level: LogLevel, ...args: unknown[]): void =>
          log(definition.name, level, format(...args)),
      },
    ]),
  );

  const totals = emptyFunctionStats();
  const byFunction = new Map<string, FunctionStats>(
    functions.map((definition) => [definition.name, emptyFunctionStats()]),
  );
  const queueWaiters = new Map<string, Set<() => void>>();
  const idleWaiters = new Set<{ resolve: () => void; reject: (error: Error) => void }>();
  let running = false;
  let pumps: Array<Promise<void>> = [];
  let unsubscribe: (() => void) | undefined;
  /** Deliveries between receive and settlement (a lost completion's lock keeps its queue busy). */
  let busy = 0;

  function statsOf(definition: ServiceBusQueueFunction): FunctionStats {
    const stats = byFunction.get(definition.name);
    if (!stats) throw new Error(`no stats for function ${definition.name}`);
    return stats;
  }

  function count(
    definition: ServiceBusQueueFunction,
    field: 'invocations' | Outcome | 'crashesInjected',
  ): void {
    statsOf(definition)[field] += 1;
    totals[field] += 1;
  }

  function sessionOpened(definition: ServiceBusQueueFunction): void {
    const stats = statsOf(definition);
    stats.activeSessions += 1;
    stats.maxConcurrentSessions = Math.max(stats.maxConcurrentSessions, stats.activeSessions);
    totals.activeSessions += 1;
    totals.maxConcurrentSessions = Math.max(totals.maxConcurrentSessions, totals.activeSessions);
  }

  function sessionClosed(definition: ServiceBusQueueFunction): void {
    statsOf(definition).activeSessions -= 1;
    totals.activeSessions -= 1;
  }

  /** Resolves on the next availability in `queue`, on stop, or after `timeoutMs`. */
  function waitForQueue(queue: string, timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      let waiters = queueWaiters.get(queue);
      if (!waiters) {
        waiters = new Set();
        queueWaiters.set(queue, waiters);
      }
      const registered = waiters;
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        registered.delete(done);
        if (timer) clearTimeout(timer);
        resolve();
      };
      registered.add(done);
      if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs);
    });
  }

  function wake(queue: string): void {
    for (const done of [...(queueWaiters.get(queue) ?? [])]) done();
  }

  function isIdleNow(): boolean {
    return busy === 0 && broker.isIdle(servedQueues);
  }

  function checkIdle(): void {
    if (idleWaiters.size === 0 || !isIdleNow()) return;
    for (const waiter of [...idleWaiters]) waiter.resolve();
    idleWaiters.clear();
  }

  function keepLocksAlive(lockDurationMs: number, renew: () => void): () => void {
    const timer = setInterval(() => {
      try {
        renew();
      } catch {
        // The lock is already gone; the settlement that follows reports it.
      }
    }, renewalIntervalMs(lockDurationMs));
    return () => clearInterval(timer);
  }

  async function invoke(
    definition: ServiceBusQueueFunction,
    triggerOptions: ServiceBusQueueTrigger,
    message: ReceivedMessage,
  ): Promise<Outcome> {
    count(definition, 'invocations');
    const shared = perFunction.get(definition);
    if (shared === undefined) throw new Error(`function ${definition.name} is not hosted here`);
    const context = new InvocationContext({
      functionName: definition.name,
      invocationId: nextInvocationId(),
      triggerMetadata: serviceBusTriggerMetadata(message),
      options: { trigger: triggerOptions, extraInputs: shared.extraInputs },
      logHandler: shared.logHandler,
    });
    for (const input of shared.extraInputs) {
      context.extraInputs.set(input, options.resolveExtraInput?.(input, definition.name));
    }
    try {
      await definition.handler(message.body, context);
      count(definition, 'succeeded');
      return 'succeeded';
    } catch (error) {
      count(definition, 'failed');
      log(
        definition.name,
        'error',
        `handler failed for messageId=${message.messageId} sessionId=${message.sessionId ?? '-'} ` +
          `deliveryCount=${message.deliveryCount}; abandoning: ${describeError(error)}`,
      );
      return 'failed';
    }
  }

  /** autoCompleteMessages, with the crash fault; false when the session should be let go. */
  function settle(
    definition: ServiceBusQueueFunction,
    message: ReceivedMessage,
    outcome: Outcome,
    settlement: Settlement,
  ): boolean {
    try {
      if (outcome === 'failed') {
        settlement.abandon(message);
        return true;
      }
      if (crashProbability > 0 && random() < crashProbability) {
        count(definition, 'crashesInjected');
        log(
          definition.name,
          'warning',
          `fault: completion of messageId=${message.messageId} sessionId=${message.sessionId ?? '-'} lost; ` +
            'it comes back when its lock expires',
        );
        return false;
      }
      settlement.complete(message);
      return true;
    } catch (error) {
      log(
        definition.name,
        'warning',
        `could not settle messageId=${message.messageId} sessionId=${message.sessionId ?? '-'}: ` +
          describeError(error),
      );
      return false;
    }
  }

  async function serveSession(
    definition: ServiceBusQueueFunction,
    triggerOptions: ServiceBusQueueTrigger,
    receiver: SessionReceiver,
  ): Promise<void> {
    let inFlight: ReceivedMessage | undefined;
    const stopRenewing = keepLocksAlive(receiver.lockDurationMs, () => {
      receiver.renewSessionLock();
      if (inFlight) receiver.renewMessageLock(inFlight);
    });
    sessionOpened(definition);
    try {
      let idleSince = Date.now();
      while (running) {
        const message = receiver.receive();
        if (!message) {
          const idleFor = Date.now() - idleSince;
          if (idleFor >= sessionIdleTimeoutMs) return;
          await waitForQueue(definition.queueName, sessionIdleTimeoutMs - idleFor);
          continue;
        }
        busy += 1;
        let keep = false;
        const turn = currentTurn();
        try {
          inFlight = message;
          const outcome = await invoke(definition, triggerOptions, message);
          // A lost completion must not be kept alive by renewal: its lock has to expire.
          inFlight = undefined;
          keep = settle(definition, message, outcome, receiver);
        } finally {
          inFlight = undefined;
          busy -= 1;
        }
        checkIdle();
        if (!keep) return;
        await turnSince(turn);
        idleSince = Date.now();
      }
    } catch (error) {
      log(
        definition.name,
        'warning',
        `lost session ${receiver.sessionId} of ${receiver.queue}: ${describeError(error)}`,
      );
    } finally {
      stopRenewing();
      receiver.close();
      sessionClosed(definition);
      checkIdle();
    }
  }

  async function runSessionPump(
    definition: ServiceBusQueueFunction,
    triggerOptions: ServiceBusQueueTrigger,
  ): Promise<void> {
    while (running) {
      const receiver = broker.acceptNextSession(definition.queueName);
      if (receiver) await serveSession(definition, triggerOptions, receiver);
      else await waitForQueue(definition.queueName);
    }
  }

  async function runPump(
    definition: ServiceBusQueueFunction,
    triggerOptions: ServiceBusQueueTrigger,
  ): Promise<void> {
    const settlement: Settlement = {
      complete: (message) => broker.complete(message),
      abandon: (message) => broker.abandon(message),
    };
    const { lockDurationMs } = broker.queueSettings(definition.queueName);
    while (running) {
      const message = broker.receive(definition.queueName);
      if (!message) {
        await waitForQueue(definition.queueName);
        continue;
      }
      busy += 1;
      const turn = currentTurn();
      const stopRenewing = keepLocksAlive(lockDurationMs, () => broker.renewMessageLock(message));
      try {
        const outcome = await invoke(definition, triggerOptions, message).finally(stopRenewing);
        settle(definition, message, outcome, settlement);
      } finally {
        busy -= 1;
      }
      checkIdle();
      await turnSince(turn);
    }
  }

  function checkDefinition(definition: ServiceBusQueueFunction): void {
    const settings = broker.queueSettings(definition.queueName);
    if (settings.requiresSession !== definition.isSessionsEnabled) {
      throw new Error(
        `function ${definition.name}: isSessionsEnabled is ${definition.isSessionsEnabled} but queue ` +
          `${definition.queueName} ${settings.requiresSession ? 'requires' : 'has no'} sessions`,
      );
    }
  }

  function runPumps(definition: ServiceBusQueueFunction): Array<Promise<void>> {
    const triggerOptions = trigger.serviceBusQueue({
      connection: definition.connection,
      queueName: definition.queueName,
      isSessionsEnabled: definition.isSessionsEnabled,
    });
    const pumpCount = definition.isSessionsEnabled ? maxConcurrentSessions : maxConcurrentCalls;
    const run = definition.isSessionsEnabled ? runSessionPump : runPump;
    return Array.from({ length: pumpCount }, () =>
      run(definition, triggerOptions).catch((error: unknown) => {
        // A pump only fails on a broker misuse; say so rather than stall silently.
        log(definition.name, 'critical', `pump stopped: ${describeError(error)}`);
      }),
    );
  }

  return {
    start(): void {
      if (running) return;
      functions.forEach(checkDefinition);
      running = true;
      unsubscribe = broker.onAvailable((queue) => {
        wake(queue);
        checkIdle();
      });
      pumps = functions.flatMap(runPumps);
    },

    async stop(): Promise<void> {
      if (!running) return;
      running = false;
      for (const queue of queueWaiters.keys()) wake(queue);
      await Promise.all(pumps);
      pumps = [];
      unsubscribe?.();
      unsubscribe = undefined;
      checkIdle();
      for (const waiter of idleWaiters)
        waiter.reject(new Error('the functions host stopped before it was idle'));
      idleWaiters.clear();
    },

    whenIdle(): Promise<void> {
      if (isIdleNow()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        idleWaiters.add({ resolve, reject });
      });
    },

    stats(): FunctionsHostStats {
      const perFunction: Record<string, FunctionStats> = {};
      for (const [name, stats] of byFunction) perFunction[name] = { ...stats };
      return { ...totals, byFunction: perFunction };
    },
  };
}
