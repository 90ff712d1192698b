/**
 * Seeded outages for the embedded runtime (docs/cli.md, `--faults storeOutage=SECONDS,...`): a
 * dependency that fails every call with a retryable error for that long, as Cosmos DB answers 503
 * or 429 and Service Bus `ServiceBusy`/`ServiceTimeout` while a region or a partition is down.
 * The outage begins at a seeded call to the dependency (the moment), and lasts by the app's clock.
 */
import { TransientError } from '../src/domain/errors';
import type { DocumentContainer, MessageSender, OrchestrationClient } from '../src/services/ports';
import type { OutageName } from './faults';
import { checkedContainer } from './checked-container';

/** The outage begins at one of the dependency's first calls, drawn from the seed. */
export const OUTAGE_START_CALLS = 5;

export interface AppClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/**
 * Real time run `scale` times faster: a 60-second outage and the handlers' minutes of backoff take
 * 60 ms at 1000. Only the convoy's waits and outages use it; broker locks keep real time, and the
 * host renews them meanwhile as it would.
 */
export function scaledClock(scale: number): AppClock {
  if (!(scale > 0)) throw new Error(`timeScale must be above 0, got ${scale}`);
  const origin = Date.now();
  return {
    now: () => origin + (Date.now() - origin) * scale,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms / scale)),
  };
}

export interface Outage {
  readonly name: OutageName;
  /** Throws the outage's transient error when the dependency is down at this call. */
  check(operation: string): void;
  /** Calls failed by the outage so far. */
  injected(): number;
  /** When it began and ends by the app's clock, once it has begun. */
  window(): { from: number; until: number } | null;
}

export function createOutage(
  name: OutageName,
  seconds: number,
  random: () => number,
  clock: AppClock,
): Outage {
  const startCall = 1 + Math.floor(random() * OUTAGE_START_CALLS);
  let calls = 0;
  let injected = 0;
  let window: { from: number; until: number } | null = null;
  return {
    name,
    check(operation) {
      if (seconds <= 0) return;
      calls += 1;
      if (calls === startCall) {
        const from = clock.now();
        window = { from, until: from + seconds * 1000 };
      }
      if (window !== null && clock.now() < window.until) {
        injected += 1;
        throw new TransientError(
          `${name}-unavailable`,
          `injected ${name}: ${operation} failed, the dependency is down for ${seconds} s`,
        );
      }
    },
    injected: () => injected,
    window: () => window,
  };
}

/** Every call of the container fails while the outage lasts. */
export function withStoreOutage(container: DocumentContainer, outage: Outage): DocumentContainer {
  return checkedContainer(container, (operation) => outage.check(`${container.name}.${operation}`));
}

/** Sends to the given queues fail while the outage lasts; nothing of a failed send is accepted. */
export function withSendOutage(
  sender: MessageSender,
  outage: Outage,
  queues: readonly string[],
): MessageSender {
  return {
    async send(queue, messages) {
      if (queues.includes(queue)) outage.check(`send to ${queue}`);
      return sender.send(queue, messages);
    },
  };
}

/** Starting an orchestration fails while the outage lasts; status and events still work. */
export function withStartOutage(client: OrchestrationClient, outage: Outage): OrchestrationClient {
  return {
    async startNew(name, instanceId, input) {
      outage.check(`starting ${name} ${instanceId}`);
      return client.startNew(name, instanceId, input);
    },
    getStatus: (instanceId) => client.getStatus(instanceId),
    raiseEvent: (instanceId, eventName, data) => client.raiseEvent(instanceId, eventName, data),
  };
}
