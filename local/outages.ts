/**
 * Seeded outages for the embedded runtime (docs/cli.md, `--faults storeOutage=SECONDS,...`): a
 * dependency that fails every call with a retryable error for that long, as Cosmos DB answers 503
 * or 429 and Service Bus `ServiceBusy`/`ServiceTimeout` while a region or a partition is down.
 * The outage begins at a seeded call to the dependency (the moment), and lasts by the app's clock.
 *
 * And `authorizationDelay=SECONDS`: the app's role assignments not yet in effect, from the run's
 * start, as after a deployment (createAuthorizationDelay).
 */
import { TransientError } from '../src/domain/errors';
import { DEFAULTS } from '../src/adapters/settings';
import { contributorRoleOn, storeFailure } from '../src/adapters/azure/cosmos-failures';
import {
  classify,
  senderRoleOn,
  type ServiceBusErrorShape,
} from '../src/adapters/azure/service-bus-failures';
import type { DocumentContainer, MessageSender, OrchestrationClient } from '../src/services/ports';
import type { OutageName } from './faults';
import { checkedContainer, type ContainerOperation } from './checked-container';

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
  /** How long it lasts once begun; 0 for an outage not asked for. */
  readonly seconds: number;
  /**
   * Throws when the dependency is down at this call: what `failure` makes of the operation, by
   * default the outage's transient error.
   */
  check(operation: string, failure?: (operation: string) => Error): void;
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
  return windowedOutage(name, seconds, clock, (calls) => calls === startCall);
}

/**
 * Down for `seconds` by the app's clock, from the first call `startsAt` accepts (its count of calls,
 * this one included), or from now when `startsAt` is undefined.
 */
function windowedOutage(
  name: OutageName,
  seconds: number,
  clock: AppClock,
  startsAt: ((calls: number) => boolean) | undefined,
): Outage {
  let calls = 0;
  let injected = 0;
  const windowFrom = (from: number): { from: number; until: number } => ({
    from,
    until: from + seconds * 1000,
  });
  let window: { from: number; until: number } | null =
    startsAt === undefined && seconds > 0 ? windowFrom(clock.now()) : null;
  const unavailable = (operation: string): Error =>
    new TransientError(
      `${name}-unavailable`,
      `injected ${name}: ${operation} failed, the dependency is down for ${seconds} s`,
    );
  return {
    name,
    seconds,
    check(operation, failure = unavailable) {
      if (seconds <= 0) return;
      calls += 1;
      if (window === null && startsAt?.(calls) === true) window = windowFrom(clock.now());
      if (window !== null && clock.now() < window.until) {
        injected += 1;
        throw failure(operation);
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

/**
 * The app's role assignments not yet in effect (`authorizationDelay=SECONDS`): from now (the run's
 * start) and for that long by the app's clock, every call of the convoy's store and every send of
 * the app is refused as Azure refuses an identity whose role has not reached the service yet
 * (withStoreAuthorization, withSendAuthorization).
 */
export function createAuthorizationDelay(seconds: number, clock: AppClock): Outage {
  return windowedOutage('authorizationDelay', seconds, clock, undefined);
}

/** Where the embedded runtime's refusals say the missing role belongs. */
export const EMBEDDED_NAMESPACE = 'the embedded broker';

/**
 * What `@azure/cosmos` throws for a 403 of Entra authorization: an ErrorResponse with the status in
 * `code` and the substatus (5301, RBAC); `items.batch` rethrows it as a plain Error keeping only the
 * message (client/Item/Items.ts, `batch`).
 */
export function cosmosRefusal(operation: ContainerOperation): Error {
  const message =
    'Request blocked by Auth embedded : Request is blocked because principal [app identity] does not have ' +
    'required RBAC permissions to perform action [Microsoft.DocumentDB/databaseAccounts/readMetadata] on ' +
    'resource [/]. Learn more: https://aka.ms/cosmos-native-rbac.';
  if (operation === 'batch') return new Error(`Batch request error: ${message}`);
  return Object.assign(new Error(message), { code: 403, substatus: 5301 });
}

/**
 * What `@azure/service-bus` throws when the identity lacks the Send claim: a ServiceBusError
 * (`name` "ServiceBusError") with code `UnauthorizedAccess`, not retryable (serviceBusError.ts maps
 * amqp:unauthorized-access to it).
 */
export function serviceBusRefusal(queue: string): ServiceBusErrorShape {
  return Object.assign(
    new Error(
      `Unauthorized access. 'Send' claim(s) are required to perform this operation. Resource: 'sb://embedded/${queue}'.`,
    ),
    { name: 'ServiceBusError' as const, code: 'UnauthorizedAccess', retryable: false },
  );
}

/**
 * Every call of the container is refused while the delay lasts, as the Cosmos DB adapter makes of
 * the SDK's refusal (src/adapters/azure/cosmos-failures.ts, `storeFailure`): the role it needs,
 * waited out.
 */
export function withStoreAuthorization(container: DocumentContainer, delay: Outage): DocumentContainer {
  // Not asked for: no layer, which would cost every call of every run a few turns of the microtask queue.
  if (delay.seconds <= 0) return container;
  const needs = contributorRoleOn(DEFAULTS.cosmosDatabase, container.name);
  return checkedContainer(container, (operation) =>
    delay.check(`${container.name}.${operation}`, () =>
      storeFailure(cosmosRefusal(operation), operation, needs),
    ),
  );
}

/**
 * Every send is refused while the delay lasts, as the Service Bus sender adapter makes of the SDK's
 * refusal (src/adapters/azure/service-bus-failures.ts, `classify`); nothing of it is accepted.
 */
export function withSendAuthorization(sender: MessageSender, delay: Outage): MessageSender {
  if (delay.seconds <= 0) return sender;
  return {
    async send(queue, messages) {
      const action = `sending to ${queue}`;
      delay.check(action, () =>
        classify(serviceBusRefusal(queue), action, senderRoleOn(EMBEDDED_NAMESPACE, queue)),
      );
      return sender.send(queue, messages);
    },
  };
}
