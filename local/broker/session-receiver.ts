/**
 * A receiver holding one session's lock: it alone receives and settles that session's messages,
 * one in flight at a time, and every receive or settlement renews the session lock.
 */
import { PermanentError } from '../../src/domain/errors';
import type { BrokerCore } from './core';
import type { HeldSession, LockedEntry } from './locks';
import type { QueueState, SessionLock, SessionState } from './queue-state';
import { SessionLockLostError, type ReceivedMessage, type SessionReceiver } from './types';

/** Locks the session for a new receiver. */
export function createSessionReceiver(
  core: BrokerCore,
  queue: QueueState,
  session: SessionState,
): SessionReceiver {
  const receiverId = core.nextReceiverId();
  const held: HeldSession = { queue, session };
  let closed = false;
  /** While the host auto-renews: the time until which the locks hold without renewals. */
  let autoRenewUntil: number | undefined;
  /** The message this receiver has in flight, for auto renewal to hold its lock too. */
  let inFlight: { entry: LockedEntry; token: string } | undefined;
  session.lock = { receiverId, lockedUntil: core.locks.taken(core.now() + queue.settings.lockDurationMs) };
  core.locks.holdSession(held);
  core.locks.scheduleWakeUp();

  function assertHeld(): SessionLock {
    core.expireLocks();
    const lock = session.lock;
    if (closed || !lock || lock.receiverId !== receiverId) {
      throw new SessionLockLostError(`the lock on session ${session.id} of ${queue.name} was lost`);
    }
    return lock;
  }

  function renew(lock: SessionLock): number {
    const renewed = core.now() + queue.settings.lockDurationMs;
    lock.lockedUntil = core.locks.taken(Math.max(renewed, autoRenewUntil ?? renewed));
    core.locks.scheduleWakeUp();
    return lock.lockedUntil;
  }

  function entryInSession(received: ReceivedMessage): LockedEntry {
    const entry = core.lockedEntryOf(received);
    if (entry.queue !== queue || entry.message.sessionId !== session.id) {
      throw new PermanentError(
        'wrong-session',
        `message ${received.messageId} does not belong to session ${session.id} of ${queue.name}`,
      );
    }
    return entry;
  }

  /** Settles under the session lock, which each settlement renews. */
  function settle(received: ReceivedMessage, action: (entry: LockedEntry) => void): void {
    const lock = assertHeld();
    const entry = entryInSession(received);
    core.takeLock(entry, received);
    action(entry);
    renew(lock);
  }

  return {
    queue: queue.name,
    sessionId: session.id,
    lockDurationMs: queue.settings.lockDurationMs,
    receive(): ReceivedMessage | undefined {
      const lock = assertHeld();
      renew(lock);
      const head = session.messages[0];
      if (!head || head.lock) return undefined;
      const received = core.lockMessage(queue, head);
      inFlight = { entry: { queue, message: head }, token: received.lockToken };
      if (autoRenewUntil !== undefined) core.holdLock(inFlight.entry, inFlight.token, autoRenewUntil);
      core.locks.scheduleWakeUp();
      return received;
    },
    complete(received: ReceivedMessage): void {
      settle(received, (entry) => core.completeLocked(entry));
    },
    abandon(received: ReceivedMessage): void {
      settle(received, (entry) => core.settleAbandon(entry));
    },
    deadLetter(received: ReceivedMessage, reason: string, description: string): void {
      settle(received, (entry) => core.settleDeadLetter(entry, reason, description));
    },
    renewMessageLock(received: ReceivedMessage): number {
      const lock = assertHeld();
      renew(lock);
      return core.renewLocked(entryInSession(received));
    },
    renewSessionLock(): number {
      return renew(assertHeld());
    },
    // The host's auto renewal as the Service Bus processor runs it: from when the session is taken,
    // for maxAutoLockRenewalDuration (Azure.Messaging.ServiceBus, src/Processor/
    // SessionReceiverManager.cs, RenewSessionLock: CancelAfter(MaxAutoLockRenewalDuration)). A lock
    // held so never runs out while a handler runs, whatever the machine's speed; only after it.
    autoRenew(maxDurationMs: number): () => void {
      const lock = assertHeld();
      const until = core.now() + maxDurationMs;
      autoRenewUntil = until;
      renew(lock);
      if (inFlight) core.holdLock(inFlight.entry, inFlight.token, until);
      return () => {
        if (autoRenewUntil !== until) return;
        autoRenewUntil = undefined;
        const afterLastRenewal = core.now() + queue.settings.lockDurationMs;
        const current = session.lock;
        if (current?.receiverId === receiverId && current.lockedUntil > afterLastRenewal) {
          current.lockedUntil = core.locks.taken(afterLastRenewal);
        }
        if (inFlight) core.holdLock(inFlight.entry, inFlight.token, undefined);
        core.locks.scheduleWakeUp();
      };
    },
    close(): void {
      if (closed) return;
      closed = true;
      core.expireLocks();
      if (session.lock?.receiverId !== receiverId) return;
      session.lock = undefined;
      core.locks.releaseSession(held);
      core.sessionReleased(held);
      core.locks.scheduleWakeUp();
    },
  };
}
