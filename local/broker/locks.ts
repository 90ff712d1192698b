/**
 * The locks the embedded broker has handed out, of messages and of sessions, and when the next one
 * runs out: expiry is lazy (every operation first settles what the clock has already decided), and
 * while someone listens a timer wakes the broker when a lock runs out, since an expiring lock
 * notifies nobody otherwise.
 */
import type { QueueState, SessionState, StoredMessage } from './queue-state';

export interface LockedEntry {
  readonly queue: QueueState;
  readonly message: StoredMessage;
}

export interface HeldSession {
  readonly queue: QueueState;
  readonly session: SessionState;
}

/** Lock tokens look like Service Bus's GUIDs but count, so that seeded runs stay reproducible. */
function lockTokenFor(counter: number): string {
  return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, '0')}`;
}

export interface LockExpiry {
  message(entry: LockedEntry): void;
  session(held: HeldSession): void;
}

export class LockTable {
  private readonly messageLocks = new Map<string, LockedEntry>();
  private readonly heldSessions = new Set<HeldSession>();
  private lockCounter = 0;
  private wakeUp: { timer: NodeJS.Timeout; at: number } | undefined;
  /**
   * No lock, of a message or a session, runs out before this (Infinity: none is held). Renewals
   * only move deadlines later, so it stays a lower bound until a scan makes it exact again, and
   * the many operations that run before it skip the scan.
   */
  private earliestLockDeadline = Infinity;

  constructor(
    private readonly now: () => number,
    private readonly listening: () => boolean,
    private readonly onWakeUp: () => void,
  ) {}

  /** Records a new deadline; returns it. */
  taken(lockedUntil: number): number {
    if (lockedUntil < this.earliestLockDeadline) this.earliestLockDeadline = lockedUntil;
    return lockedUntil;
  }

  nextToken(): string {
    this.lockCounter += 1;
    return lockTokenFor(this.lockCounter);
  }

  addMessage(token: string, entry: LockedEntry): void {
    this.messageLocks.set(token, entry);
  }

  message(token: string): LockedEntry | undefined {
    return this.messageLocks.get(token);
  }

  deleteMessage(token: string): void {
    this.messageLocks.delete(token);
  }

  holdSession(held: HeldSession): void {
    this.heldSessions.add(held);
  }

  releaseSession(held: HeldSession): void {
    this.heldSessions.delete(held);
  }

  /** Takes every lock the clock has run out, message locks first, telling `expired` of each. */
  expire(expired: LockExpiry): void {
    const t = this.now();
    if (t < this.earliestLockDeadline) return;
    let earliest = Infinity;
    for (const [token, entry] of this.messageLocks) {
      const lock = entry.message.lock;
      if (lock && lock.lockedUntil > t) {
        earliest = Math.min(earliest, lock.lockedUntil);
        continue;
      }
      this.messageLocks.delete(token);
      expired.message(entry);
    }
    for (const held of this.heldSessions) {
      const lock = held.session.lock;
      if (lock && lock.lockedUntil > t) {
        earliest = Math.min(earliest, lock.lockedUntil);
        continue;
      }
      this.heldSessions.delete(held);
      held.session.lock = undefined;
      expired.session(held);
    }
    this.earliestLockDeadline = earliest;
  }

  clearWakeUp(): void {
    if (this.wakeUp) clearTimeout(this.wakeUp.timer);
    this.wakeUp = undefined;
  }

  // Only while someone listens, so that a broker driven by a test clock runs no timers at all.
  scheduleWakeUp(): void {
    if (!this.listening()) return;
    // A bound that a renewal or settlement made stale wakes the broker early, to no harm: the
    // wake-up's scan makes it exact and schedules the next.
    const at = this.earliestLockDeadline === Infinity ? undefined : this.earliestLockDeadline;
    if (at === undefined) {
      this.clearWakeUp();
      return;
    }
    if (this.wakeUp && this.wakeUp.at <= at) return;
    this.clearWakeUp();
    const timer = setTimeout(
      () => {
        this.wakeUp = undefined;
        this.onWakeUp();
        this.scheduleWakeUp();
      },
      Math.max(1, at - this.now()),
    );
    this.wakeUp = { timer, at };
  }
}
