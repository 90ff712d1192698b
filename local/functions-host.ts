/**
 * The embedded Functions host for Service Bus triggers: runs the functions `@azure/functions`
 * registered (../worker/core) against the embedded broker as the Azure Functions host does with
 * host.json `extensions.serviceBus` settings: session pumps up to `maxConcurrentSessions`, one
 * message at a time per session, `autoCompleteMessages` settlement (return completes, throw
 * abandons), auto lock renewal up to `maxAutoLockRenewalDuration` and `functionTimeout`
 * (./host/host-settings, ./host/function-timeout). Each delivery goes through the Node worker's
 * invocation path (./host/queue-function).
 */
import { format } from 'node:util';
import type { LogLevel } from '@azure/functions';
import type { EmbeddedBroker, ReceivedMessage, SessionReceiver } from './broker/broker';
import { MessageLockLostError, SessionLockLostError } from './broker/types';
import type { RegisteredFunction } from './worker/core';
import type { InputBinder } from './worker/bindings';
import type { WorkerLog } from './worker/invoke';
import { createHostCounters, type FunctionsHostStats } from './host/host-stats';
import { currentTurn, turnSince } from './host/loop-turn';
import { createQueueWaiters } from './host/queue-waiters';
import { invocationIds, invokeForMessage, queueFunctionsOf, type QueueFunction } from './host/queue-function';
import { withFunctionTimeout } from './host/function-timeout';
import { FUNCTION_TIMEOUT_MS, MAX_AUTO_LOCK_RENEWAL_MS } from './host/host-settings';

export type { FunctionStats, FunctionsHostStats } from './host/host-stats';

const DEFAULT_MAX_CONCURRENT_SESSIONS = 8;
/** host.json's default is 16 per CPU; one local process needs no more than 16. */
const DEFAULT_MAX_CONCURRENT_CALLS = 16;
/** Short locally, so that a pump soon moves on to another session. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 100;

export type HostLog = (functionName: string, level: LogLevel, message: string) => void;

export interface FunctionsHostFaults {
  /** Probability that, after the handler returned, its completion is lost (a crash after commit). */
  crashAfterCommit?: number;
  /**
   * Probability that, after the handler returned, the instance is recycled: its completion is lost
   * and so is its memory (`recycleInstance`), so that the redelivery meets a fresh instance.
   */
  recycleAfterCommit?: number;
  /**
   * Faults aimed at sessions of one queue, with no draw: once for each session named, the first
   * delivery handled in it loses its completion (`name@ORDER` of local/faults.ts, an order being its
   * session on `order-transactions`).
   */
  aimed?: {
    queue: string;
    crashAfterCommit?: readonly string[];
    recycleAfterCommit?: readonly string[];
  };
}

export interface FunctionsHostOptions {
  broker: EmbeddedBroker;
  /** What `@azure/functions` registered; the host serves those with a Service Bus trigger. */
  functions: readonly RegisteredFunction[];
  maxConcurrentSessions?: number;
  maxConcurrentCalls?: number;
  sessionIdleTimeoutMs?: number;
  random?: () => number;
  /**
   * The crash fault's draw for one delivery, from its queue, messageId and deliveryCount; when given
   * it is used instead of `random`, so which deliveries lose their completion does not depend on the
   * order sessions finish their handlers in, and one seed gives one run.
   */
  draw?: (key: string) => number;
  /** The recycle fault's draw, keyed as `draw`; its own stream, so the two faults draw apart. */
  recycleDraw?: (key: string) => number;
  faults?: FunctionsHostFaults;
  log?: HostLog;
  /** The RPC value of each extra input (e.g. the durable client), as the Azure host binds it. */
  bindInput?: InputBinder;
  /**
   * What a recycled instance loses: its process's memory (the consumer's cache of orders), so that
   * what it handled next is handled as by a fresh instance.
   */
  recycleInstance?: () => void;
  /** host.json `extensions.serviceBus.maxAutoLockRenewalDuration`; the deployed value by default. */
  maxAutoLockRenewalDurationMs?: number;
  /** host.json `functionTimeout`; the deployed value by default. */
  functionTimeoutMs?: number;
  /**
   * What one call to Service Bus costs the pump that makes it, in simulated network latency (none by
   * default: the embedded broker is in process). On Azure a pump waits for each of these calls before
   * it goes on (azure-sdk-for-net `sdk/servicebus/Azure.Messaging.ServiceBus/src/Processor/ReceiverManager.cs`,
   * `ReceiveAndProcessMessagesAsync` / `ProcessOneMessage`, and `SessionReceiverManager.cs`): the
   * receive of a message (the embedded pumps do not prefetch, as host.json's `prefetchCount` 0 would:
   * each receive grants the link one credit and waits for the transfer; bench/session-model.ts models
   * the shipped prefetch), the settlement the extension makes after the function returns
   * (`autoCompleteMessages`: complete, or abandon after a throw), and a session slot's accept of its
   * next session. One round trip each; sends are the functions' own and not counted here.
   */
  brokerLatencyMs?: number;
  /** How a broker round trip waits out `brokerLatencyMs`; a timer unless given (a test records them). */
  brokerWait?: (ms: number) => Promise<void>;
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

/** A lost lock is the broker saying what happened, not a defect: its message is the whole story. */
function describeLockLoss(error: unknown): string {
  if (error instanceof MessageLockLostError || error instanceof SessionLockLostError) {
    return `${error.name}: ${error.message}`;
  }
  return describeError(error);
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

export function createFunctionsHost(options: FunctionsHostOptions): FunctionsHost {
  const { broker } = options;
  const functions = queueFunctionsOf(options.functions);
  const maxConcurrentSessions = options.maxConcurrentSessions ?? DEFAULT_MAX_CONCURRENT_SESSIONS;
  const maxConcurrentCalls = options.maxConcurrentCalls ?? DEFAULT_MAX_CONCURRENT_CALLS;
  const sessionIdleTimeoutMs = options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS;
  const random = options.random ?? Math.random;
  const draw = options.draw ?? (() => random());
  const recycleDraw = options.recycleDraw ?? (() => random());
  const crashProbability = options.faults?.crashAfterCommit ?? 0;
  const recycleProbability = options.faults?.recycleAfterCommit ?? 0;
  const aimed = options.faults?.aimed;
  /** The aimed faults that happened: each once, at the first delivery its session's pump settles. */
  const aimedDone = new Set<string>();
  const aimedAt = (
    fault: 'crashAfterCommit' | 'recycleAfterCommit',
    fn: QueueFunction,
    message: ReceivedMessage,
  ) => {
    const sessionId = message.sessionId;
    if (aimed === undefined || fn.queueName !== aimed.queue || sessionId === undefined) return false;
    if (!(aimed[fault] ?? []).includes(sessionId)) return false;
    const done = `${fault}\u0000${sessionId}`;
    if (aimedDone.has(done)) return false;
    aimedDone.add(done);
    return true;
  };
  const log = options.log ?? defaultLog;
  const maxAutoLockRenewalMs = options.maxAutoLockRenewalDurationMs ?? MAX_AUTO_LOCK_RENEWAL_MS;
  const functionTimeoutMs = options.functionTimeoutMs ?? FUNCTION_TIMEOUT_MS;
  const brokerLatencyMs = options.brokerLatencyMs ?? 0;
  const brokerWait =
    options.brokerWait ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  /**
   * Waits out `trips` calls to Service Bus made one after the other; undefined at no latency, so that
   * nothing is awaited. A session slot's calls follow each other with nothing of its own between
   * them (a settlement and the next receive, an accept and its first receive), so it waits for them
   * together: the same time, one wake-up of the clock.
   */
  const brokerRoundTrips =
    brokerLatencyMs > 0
      ? (fn: QueueFunction, trips: number): Promise<void> => {
          for (let trip = 0; trip < trips; trip++) counters.count(fn.name, 'brokerRoundTrips');
          return brokerWait(trips * brokerLatencyMs);
        }
      : undefined;
  // User logs as the function wrote them; the worker's own lines only when they warn.
  const workerLog: WorkerLog = (functionName, level, category, message) => {
    if (level === 'none') return;
    if (category === 'user' || level === 'warning' || level === 'error' || level === 'critical') {
      log(functionName, level, message);
    }
  };
  const servedQueues = [...new Set(functions.map((fn) => fn.queueName))];
  const nextInvocationId = invocationIds();
  const counters = createHostCounters(functions.map((fn) => fn.name));
  const waiters = createQueueWaiters();
  const idleWaiters = new Set<{ resolve: () => void; reject: (error: Error) => void }>();
  let running = false;
  let pumps: Array<Promise<void>> = [];
  let unsubscribe: (() => void) | undefined;
  /** Deliveries between receive and settlement (a lost completion's lock keeps its queue busy). */
  let busy = 0;

  function isIdleNow(): boolean {
    return busy === 0 && broker.isIdle(servedQueues);
  }

  function checkIdle(): void {
    if (idleWaiters.size === 0 || !isIdleNow()) return;
    for (const waiter of [...idleWaiters]) waiter.resolve();
    idleWaiters.clear();
  }

  async function invoke(fn: QueueFunction, message: ReceivedMessage): Promise<Outcome> {
    counters.count(fn.name, 'invocations');
    try {
      await withFunctionTimeout(
        invokeForMessage(fn, message, nextInvocationId(), options.bindInput, workerLog),
        fn.name,
        functionTimeoutMs,
      );
      counters.count(fn.name, 'succeeded');
      return 'succeeded';
    } catch (error) {
      counters.count(fn.name, 'failed');
      log(
        fn.name,
        'error',
        `handler failed for messageId=${message.messageId} sessionId=${message.sessionId ?? '-'} ` +
          `deliveryCount=${message.deliveryCount}; abandoning: ${describeError(error)}`,
      );
      return 'failed';
    }
  }

  /** autoCompleteMessages, with the crash fault; false when the session should be let go. */
  function settle(
    fn: QueueFunction,
    message: ReceivedMessage,
    outcome: Outcome,
    settlement: Settlement,
  ): boolean {
    try {
      if (outcome === 'failed') {
        settlement.abandon(message);
        return true;
      }
      const key = `${fn.queueName}\u0000${message.messageId}\u0000${message.deliveryCount}`;
      const recycled =
        aimedAt('recycleAfterCommit', fn, message) ||
        (recycleProbability > 0 && recycleDraw(key) < recycleProbability);
      if (
        recycled ||
        aimedAt('crashAfterCommit', fn, message) ||
        (crashProbability > 0 && draw(key) < crashProbability)
      ) {
        counters.count(fn.name, 'crashesInjected');
        if (recycled) options.recycleInstance?.();
        log(
          fn.name,
          'warning',
          `fault: completion of messageId=${message.messageId} sessionId=${message.sessionId ?? '-'} lost` +
            (recycled ? ', its instance recycled' : '') +
            '; it comes back when its lock expires',
        );
        return false;
      }
      settlement.complete(message);
      return true;
    } catch (error) {
      log(
        fn.name,
        'warning',
        `could not settle messageId=${message.messageId} sessionId=${message.sessionId ?? '-'}: ` +
          describeError(error),
      );
      return false;
    }
  }

  /** Serves an accepted session; the accept's round trip is still to be waited out. */
  async function serveSession(fn: QueueFunction, receiver: SessionReceiver): Promise<void> {
    // The host renews in its own process, so a busy worker never loses a lock it still holds.
    const stopRenewing = receiver.autoRenew(maxAutoLockRenewalMs);
    counters.sessionOpened(fn.name);
    try {
      let idleSince = Date.now();
      /** Calls made and not yet waited out: the accept, then each settlement. */
      let owed = 1;
      while (running) {
        const message = receiver.receive();
        if (!message) {
          if (brokerRoundTrips !== undefined && owed > 0) {
            await brokerRoundTrips(fn, owed);
            owed = 0;
            idleSince = Date.now();
            continue;
          }
          const idleFor = Date.now() - idleSince;
          if (idleFor >= sessionIdleTimeoutMs) return;
          await waiters.waitFor(fn.queueName, sessionIdleTimeoutMs - idleFor);
          continue;
        }
        busy += 1;
        let keep = false;
        const turn = currentTurn();
        try {
          // The message reaches the host one round trip after the receive asked for it, and the
          // receive follows what the slot called before.
          if (brokerRoundTrips !== undefined) await brokerRoundTrips(fn, owed + 1);
          owed = 0;
          const outcome = await invoke(fn, message);
          // A lost completion returns at once, and renewal stops: its lock has to expire.
          keep = settle(fn, message, outcome, receiver);
        } finally {
          busy -= 1;
        }
        checkIdle();
        if (!keep) return;
        // The settlement's round trip: the slot receives again once it is acknowledged.
        owed = 1;
        await turnSince(turn);
        idleSince = Date.now();
      }
    } catch (error) {
      log(
        fn.name,
        'warning',
        `lost session ${receiver.sessionId} of ${receiver.queue}: ${describeLockLoss(error)}`,
      );
    } finally {
      stopRenewing();
      receiver.close();
      counters.sessionClosed(fn.name);
      checkIdle();
    }
  }

  async function runSessionPump(fn: QueueFunction): Promise<void> {
    while (running) {
      const receiver = broker.acceptNextSession(fn.queueName);
      if (receiver) await serveSession(fn, receiver);
      else await waiters.waitFor(fn.queueName);
    }
  }

  async function runPump(fn: QueueFunction): Promise<void> {
    const settlement: Settlement = {
      complete: (message) => broker.complete(message),
      abandon: (message) => broker.abandon(message),
    };
    while (running) {
      const message = broker.receive(fn.queueName);
      if (!message) {
        await waiters.waitFor(fn.queueName);
        continue;
      }
      busy += 1;
      const turn = currentTurn();
      const stopRenewing = broker.autoRenewMessageLock(message, maxAutoLockRenewalMs);
      let settled = false;
      try {
        // The receive's transfer: the message reaches the host one round trip after it asked.
        if (brokerRoundTrips !== undefined) await brokerRoundTrips(fn, 1);
        const outcome = await invoke(fn, message).finally(stopRenewing);
        settled = settle(fn, message, outcome, settlement);
      } finally {
        busy -= 1;
      }
      checkIdle();
      // The settlement's round trip. Competing calls receive apart, so this one waits it alone.
      if (settled && brokerRoundTrips !== undefined) await brokerRoundTrips(fn, 1);
      await turnSince(turn);
    }
  }

  function checkFunction(fn: QueueFunction): void {
    const settings = broker.queueSettings(fn.queueName);
    if (settings.requiresSession !== fn.isSessionsEnabled) {
      throw new Error(
        `function ${fn.name}: isSessionsEnabled is ${fn.isSessionsEnabled} but queue ` +
          `${fn.queueName} ${settings.requiresSession ? 'requires' : 'has no'} sessions`,
      );
    }
  }

  function runPumps(fn: QueueFunction): Array<Promise<void>> {
    const pumpCount = fn.isSessionsEnabled ? maxConcurrentSessions : maxConcurrentCalls;
    const run = fn.isSessionsEnabled ? runSessionPump : runPump;
    return Array.from({ length: pumpCount }, () =>
      run(fn).catch((error: unknown) => {
        // A pump only fails on a broker misuse; say so rather than stall silently.
        log(fn.name, 'critical', `pump stopped: ${describeError(error)}`);
      }),
    );
  }

  return {
    start(): void {
      if (running) return;
      functions.forEach(checkFunction);
      running = true;
      unsubscribe = broker.onAvailable((queue) => {
        waiters.wake(queue);
        checkIdle();
      });
      pumps = functions.flatMap(runPumps);
    },

    async stop(): Promise<void> {
      if (!running) return;
      running = false;
      waiters.wakeAll();
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

    stats: () => counters.snapshot(),
  };
}
