/**
 * Replaying a parked or dead-lettered message into its queue and session (docs/messages.md), after
 * predicting what it would meet there. A replay that would only be parked again, or have no
 * effect, is refused unless forced: the cause has to be fixed first (a new deployment of the
 * validator, an order that now exists...). A replay the broker would drop without a word is
 * refused even when forced, because the message would then be gone from everywhere.
 */
import { describeProblems, parseLedgerMessage, validateEntry } from '../../domain/entry';
import { admit, newOrderState, recordsNeeded, type ParkReason } from '../../domain/order';
import { resequence } from '../../domain/sequential-convoy';
import { parkedLedgerEntry, replayTargetOf } from './held-messages';
import type {
  DeadLetteredMessage,
  MessageOperations,
  OperableQueue,
  ParkedMessage,
} from './message-operations-port';
import { readOrderState, readRecords } from '../order-documents';
import type { DocumentContainer, OutgoingMessage } from '../ports';
import { QUEUE } from '../queues';

export interface ReplayDeps {
  operations: MessageOperations;
  /** The `orders` container: a prediction on `order-transactions` reads the order it would change. */
  orders: DocumentContainer;
  /** The broker's clock, near enough: it decides whether duplicate detection still remembers an id. */
  now: () => number;
}

export interface ReplayOptions {
  /** Send it even when the prediction says it would be parked again or have no effect. */
  force?: boolean;
}

export type Prediction =
  | { outcome: 'parked'; reason: ParkReason; description: string }
  | { outcome: 'duplicate'; description: string }
  | { outcome: 'applied' | 'buffered' | 'forwarded' | 'restored' | 'effects'; description: string };

export type ReplayRefusal =
  | 'not-found'
  | 'no-origin'
  | 'would-park-again'
  | 'no-effect'
  | 'duplicate-detection'
  | 'entry-still-invalid';

export type ReplayResult =
  | {
      replayed: true;
      queue: OperableQueue;
      sessionId: string | null;
      messageId: string;
      /** The messageId the replay was sent under: a fresh one for an entry (replayTargetOf). */
      sentAs: string;
      forced: boolean;
      prediction: Prediction;
    }
  | { replayed: false; refusal: ReplayRefusal; reason: string; prediction: Prediction | null };

export interface Inspection<T extends ParkedMessage | DeadLetteredMessage> {
  message: T;
  /** Where a replay would send it, or why it cannot be replayed. */
  replay:
    | { queue: OperableQueue; sessionId: string | null; prediction: Prediction }
    | { queue: null; reason: string };
}

const FORCE_HINT = 'force the replay to send it anyway';

const parkedAs = (reason: ParkReason, description: string): Prediction => ({
  outcome: 'parked',
  reason,
  description,
});

function predictLedger(held: ParkedMessage | DeadLetteredMessage, message: OutgoingMessage): Prediction {
  const entry = held.kind === 'parked' ? parkedLedgerEntry(held) : null;
  if (entry !== null) {
    // Checked at the index it had in its batch, so the description reads as the park's did.
    const result = validateEntry(held.body, `entries[${entry.entryIndex}]`);
    if (!result.ok) return parkedAs('invalid', describeProblems(result.problems));
    return {
      outcome: 'forwarded',
      description: `entry ${result.value.transactionId} of batch ${entry.batchId} forwarded to ${QUEUE.orderTransactions} in session ${result.value.orderId}`,
    };
  }
  const parsed = parseLedgerMessage(message.body);
  if (!parsed.ok) return parkedAs('invalid', describeProblems(parsed.problems));
  const { batchId, entries } = parsed.value;
  const problems = entries.flatMap(({ result }) => (result.ok ? [] : [describeProblems(result.problems)]));
  if (entries.length > 0 && problems.length === entries.length) {
    return parkedAs('invalid', problems.join('; '));
  }
  const forwarded = entries.length - problems.length;
  return {
    outcome: 'forwarded',
    description:
      `batch ${batchId}: ${forwarded} entries forwarded to ${QUEUE.orderTransactions}` +
      (problems.length > 0 ? `, ${problems.length} parked as invalid` : ''),
  };
}

/** docs/messages.md (the order of checks) against the order as stored now, as `applyEntry` would decide it. */
async function predictEntry(orders: DocumentContainer, message: OutgoingMessage): Promise<Prediction> {
  const admitted = admit({
    messageId: message.messageId,
    sessionId: message.sessionId ?? '',
    body: message.body,
    correlationId: message.correlationId,
    applicationProperties: message.applicationProperties,
  });
  if (admitted.kind === 'park') return parkedAs(admitted.reason, admitted.description);
  const { entry, digest, properties } = admitted;
  const stored = await readOrderState(orders, entry.orderId);
  const state = stored ?? newOrderState(entry.orderId);
  // The entry's own record too: the consumer learns of it from the store's 409, a prediction writes nothing.
  const known = await readRecords(orders, entry.orderId, [
    ...recordsNeeded(state, entry),
    entry.transactionId,
  ]);
  const decision = resequence(state, entry, digest, message.messageId, properties, known);
  switch (decision.kind) {
    case 'park':
      return parkedAs(decision.reason, decision.description);
    case 'duplicate': {
      // The consumer does whatever effects the order still holds pending, this entry's park included.
      const pending = stored?.outbox ?? null;
      const rejection = pending?.parks.find((park) => park.transactionId === entry.transactionId);
      if (rejection !== undefined) {
        return parkedAs(
          rejection.reason,
          `its order still holds the rejection to park: ${rejection.description}`,
        );
      }
      if (pending !== null) {
        const effects = [
          ...pending.parks.map((park) => `park ${park.messageId}`),
          ...(pending.startFulfillment === null
            ? []
            : [`ask to start the fulfillment of ${entry.orderId} (a no-op once it started)`]),
        ];
        return {
          outcome: 'effects',
          description: `transactionId ${entry.transactionId} was already ${decision.previous} on order ${entry.orderId}; the consumer would do the effects its order still holds pending: ${effects.join(', ')}`,
        };
      }
      return {
        outcome: 'duplicate',
        description: `transactionId ${entry.transactionId} was already ${decision.previous} on order ${entry.orderId} with the same content; the consumer would count it as a duplicate`,
      };
    }
    case 'change': {
      if (decision.outcome === 'rejected') {
        const own = decision.rejected.find((rejected) => rejected.transactionId === entry.transactionId);
        // Stryker disable next-line StringLiteral: equivalent, the fallback is never reached: a rejected incoming entry is always among decision.rejected (Slots.take), and 'rejected' → "" does not compile (ParkReason).
        return parkedAs('rejected', own?.description ?? `rejected at sequence ${entry.sequence}`);
      }
      if (decision.outcome === 'buffered') {
        return {
          outcome: 'buffered',
          description: `order ${entry.orderId} would buffer sequence ${entry.sequence} and wait for ${decision.state.appliedSequence + 1}`,
        };
      }
      const released = decision.applied.length - 1;
      return {
        outcome: 'applied',
        description:
          `applied at sequence ${entry.sequence} of order ${entry.orderId}` +
          (released > 0 ? `, releasing ${released} buffered entries` : '') +
          (decision.submitted ? ', submitting the order' : ''),
      };
    }
  }
}

/**
 * What the held message, sent as `message` into `queue`, would meet there now. A snapshot:
 * deliveries running meanwhile may change it.
 */
export async function predictReplay(
  orders: DocumentContainer,
  held: ParkedMessage | DeadLetteredMessage,
  queue: OperableQueue,
  message: OutgoingMessage,
): Promise<Prediction> {
  switch (queue) {
    case QUEUE.ledger:
      return predictLedger(held, message);
    case QUEUE.orderTransactions:
      return predictEntry(orders, message);
    case QUEUE.parked:
      return { outcome: 'restored', description: 'it goes back into parked as it was' };
  }
}

export async function inspect<T extends ParkedMessage | DeadLetteredMessage>(
  deps: Pick<ReplayDeps, 'orders'>,
  message: T,
): Promise<Inspection<T>> {
  const target = replayTargetOf(message);
  if (!target.ok) return { message, replay: { queue: null, reason: target.reason } };
  return {
    message,
    replay: {
      queue: target.queue,
      sessionId: target.message.sessionId ?? null,
      prediction: await predictReplay(deps.orders, message, target.queue, target.message),
    },
  };
}

function predictionRefusal(
  message: ParkedMessage | DeadLetteredMessage,
  prediction: Prediction,
): { refusal: ReplayRefusal; reason: string } | null {
  if (prediction.outcome === 'duplicate') {
    return {
      refusal: 'no-effect',
      reason: `replaying ${message.messageId} would have no effect: ${prediction.description}; ${FORCE_HINT} (it then leaves ${message.kind === 'parked' ? 'parked' : 'the dead-letter queue'})`,
    };
  }
  // A dead-lettered message never was parked: being parked with a reason is a step forward for it.
  if (prediction.outcome !== 'parked' || message.kind !== 'parked') return null;
  const again =
    prediction.reason === message.park.reason
      ? `as ${prediction.reason} again`
      : `again, now as ${prediction.reason} (it was parked as ${message.park.reason})`;
  return {
    refusal: 'would-park-again',
    reason: `replaying ${message.messageId} would park it ${again}: ${prediction.description}; fix the cause first or ${FORCE_HINT}`,
  };
}

/**
 * Every queue the replay may land in remembers ids for its window; the message was accepted there
 * no later than it was enqueued where it is held (parked after arriving, or dead-lettered in place),
 * so once that window has passed since then, the id is forgotten.
 */
async function duplicateDetectionRefusal(
  deps: ReplayDeps,
  message: ParkedMessage | DeadLetteredMessage,
  queues: readonly OperableQueue[],
): Promise<string | null> {
  for (const queue of new Set(queues)) {
    const { duplicateDetectionWindowMs: window } = await deps.operations.queueInfo(queue);
    if (window === null) continue;
    const forgottenAt = message.enqueuedTimeUtc + window;
    if (deps.now() >= forgottenAt) continue;
    return (
      `${queue} detects duplicates over ${Math.ceil(window / 60_000)} minutes and may still remember messageId ` +
      `${message.messageId}: it would drop the replay without a word and the message would be lost. ` +
      `Replay after ${new Date(forgottenAt).toISOString()}`
    );
  }
  return null;
}

/** A replay that passed every check: where it goes and what it should meet there. */
export interface ReplayAllowed {
  allowed: true;
  queue: OperableQueue;
  sessionId: string | null;
  forced: boolean;
  prediction: Prediction;
}

export type ReplayRefused = Extract<ReplayResult, { replayed: false }>;

/**
 * Every check a replay makes before it sends anything (docs/messages.md): a dry run stops here, a
 * replay then delivers. Reads the order as stored now, writes nothing.
 */
export async function checkReplay(
  deps: ReplayDeps,
  message: ParkedMessage | DeadLetteredMessage,
  options: ReplayOptions = {},
): Promise<ReplayAllowed | ReplayRefused> {
  const target = replayTargetOf(message);
  if (!target.ok) return { replayed: false, refusal: 'no-origin', reason: target.reason, prediction: null };
  const prediction = await predictReplay(deps.orders, message, target.queue, target.message);
  const entry = message.kind === 'parked' ? parkedLedgerEntry(message) : null;
  if (entry !== null && prediction.outcome === 'parked') {
    // The ledger parks an entry under `<batchId>#<index in its batch>`, and the replayed batch holds
    // this entry alone: parked again it would take index 0, which is another entry's id.
    return {
      replayed: false,
      refusal: 'entry-still-invalid',
      reason: `ledger entry ${message.messageId} is still invalid (${prediction.description}); replayed, the ledger would park it again as ${entry.batchId}#0, another entry's id, so it is not replayed even when forced`,
      prediction,
    };
  }
  const refused = predictionRefusal(message, prediction);
  const forced = options.force === true;
  if (refused !== null && !forced) return { replayed: false, ...refused, prediction };

  const landsIn = prediction.outcome === 'parked' ? [target.queue, QUEUE.parked] : [target.queue];
  // Sent under a fresh messageId (an entry, see replayTargetOf), no queue can take it for a duplicate.
  const lost =
    target.message.messageId === message.messageId
      ? await duplicateDetectionRefusal(deps, message, landsIn)
      : null;
  if (lost !== null) return { replayed: false, refusal: 'duplicate-detection', reason: lost, prediction };
  return {
    allowed: true,
    queue: target.queue,
    sessionId: target.message.sessionId ?? null,
    forced: forced && refused !== null,
    prediction,
  };
}

/** Checks the held message as it was listed, then takes that very copy and sends it. */
export async function replayHeld(
  deps: ReplayDeps,
  message: ParkedMessage | DeadLetteredMessage,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const checked = await checkReplay(deps, message, options);
  if (!('allowed' in checked)) return checked;
  const delivery =
    message.kind === 'parked'
      ? await deps.operations.replayParked(message)
      : await deps.operations.replayDeadLettered(message);
  if (!delivery.delivered) {
    return {
      replayed: false,
      refusal: 'not-found',
      reason: `${message.messageId} left ${message.kind === 'parked' ? 'parked' : `the dead-letter queue of ${message.queue}`} meanwhile; nothing was sent`,
      prediction: checked.prediction,
    };
  }
  return {
    replayed: true,
    queue: checked.queue,
    sessionId: checked.sessionId,
    messageId: message.messageId,
    sentAs: delivery.messageId,
    forced: checked.forced,
    prediction: checked.prediction,
  };
}

export async function replayParked(
  deps: ReplayDeps,
  messageId: string,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const message = await deps.operations.findParked(messageId);
  if (message === undefined) {
    return {
      replayed: false,
      refusal: 'not-found',
      reason: `no parked message ${messageId}`,
      prediction: null,
    };
  }
  return replayHeld(deps, message, options);
}

export async function replayDeadLettered(
  deps: ReplayDeps,
  queue: OperableQueue,
  messageId: string,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const message = await deps.operations.findDeadLettered(queue, messageId);
  if (message === undefined) {
    return {
      replayed: false,
      refusal: 'not-found',
      reason: `no dead-lettered message ${messageId} in ${queue}`,
      prediction: null,
    };
  }
  return replayHeld(deps, message, options);
}
