/**
 * A delivery's deadline (src/services/backoff.ts, `deadlineMs`): past it no attempt, no wait and no
 * call to a dependency starts, so that one attempt, which makes several calls one after the other,
 * ends with the call under way (held to its own bound, src/adapters/handler-time.ts). The handler
 * passes its ports through `withinDeadline` for each attempt; the ports refuse a call past the
 * deadline with a transient DeliveryDeadlineError, and the message goes back to the broker.
 */
import { TransientError } from '../domain/errors';
import type { DocumentContainer, FulfillmentStarter, MessageSender } from './ports';

export class DeliveryDeadlineError extends TransientError {
  constructor(what: string, deadlineMs: number) {
    super(
      'delivery-deadline',
      `${what} not started: the delivery is past its deadline of ${deadlineMs / 1000} s, so that it ends ` +
        'before the host stops renewing its lock; the message goes back to the broker',
    );
  }
}

export interface Deadline {
  /** Throws DeliveryDeadlineError once the deadline has passed: called before each call. */
  check(what: string): void;
  /** What is left of the delivery's time; 0 or less once it is up. */
  remainingMs(): number;
}

/** No deadline: for a delivery policy without one. */
const NONE: Deadline = { check: () => undefined, remainingMs: () => Number.POSITIVE_INFINITY };

/** `elapsedMs` is the delivery's time so far, by the app's clock. */
export function deliveryDeadline(deadlineMs: number | undefined, elapsedMs: () => number): Deadline {
  if (deadlineMs === undefined) return NONE;
  const remainingMs = (): number => deadlineMs - elapsedMs();
  return {
    remainingMs,
    check(what) {
      if (remainingMs() <= 0) throw new DeliveryDeadlineError(what, deadlineMs);
    },
  };
}

function senderWithin(sender: MessageSender, deadline: Deadline): MessageSender {
  return {
    async send(queue, messages) {
      deadline.check(`sending to ${queue}`);
      return sender.send(queue, messages);
    },
  };
}

function containerWithin(container: DocumentContainer, deadline: Deadline): DocumentContainer {
  const check = (operation: string): void => deadline.check(`${container.name}.${operation}`);
  return {
    name: container.name,
    partitionKeyPath: container.partitionKeyPath,
    async create(document) {
      check('create');
      return container.create(document);
    },
    async read(partitionKey, id) {
      check('read');
      return container.read(partitionKey, id);
    },
    async replace(document, options) {
      check('replace');
      return container.replace(document, options);
    },
    async upsert(document, options) {
      check('upsert');
      return container.upsert(document, options);
    },
    async delete(partitionKey, id, options) {
      check('delete');
      return container.delete(partitionKey, id, options);
    },
    async batch(partitionKey, operations) {
      check('batch');
      return container.batch(partitionKey, operations);
    },
    async query(spec) {
      check('query');
      return container.query(spec);
    },
  };
}

function starterWithin(starter: FulfillmentStarter, deadline: Deadline): FulfillmentStarter {
  return {
    async start(input) {
      deadline.check(`starting the fulfillment of ${input.orderId}`);
      return starter.start(input);
    },
  };
}

/** The ports a Service Bus handler calls; whichever it has are held to the deadline. */
export interface DeadlinePorts {
  sender: MessageSender;
  orders?: DocumentContainer;
  fulfillment?: FulfillmentStarter;
}

/** The same dependencies, each call refused once the deadline has passed. */
export function withinDeadline<T extends DeadlinePorts>(ports: T, deadline: Deadline): T {
  if (deadline === NONE) return ports;
  return {
    ...ports,
    sender: senderWithin(ports.sender, deadline),
    ...(ports.orders === undefined ? {} : { orders: containerWithin(ports.orders, deadline) }),
    ...(ports.fulfillment === undefined ? {} : { fulfillment: starterWithin(ports.fulfillment, deadline) }),
  };
}
