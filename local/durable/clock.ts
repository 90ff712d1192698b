/**
 * The durable driver's clock. Real time uses the process clock and setTimeout; virtual time only
 * moves when the driver says so, which lets tests cover hours of backoff and review timeouts at once.
 */

export type ClockOption = { mode: 'real' } | { mode: 'virtual'; start?: number };

export interface PendingTimer {
  readonly fireAt: number;
  readonly owner: string;
}

export interface DriverClock {
  readonly mode: 'real' | 'virtual';
  now(): number;
  /** Calls `fire` once the clock reaches `fireAt` (soon, if it already has); returns a cancel function. */
  schedule(fireAt: number, owner: string, fire: () => void): () => void;
  /** Virtual time: timers not yet fired, earliest first. */
  pending(): PendingTimer[];
  /** Virtual time: moves the clock to the earliest timer (never backwards) and fires it. */
  fireNext(): boolean;
  /** Virtual time: moves the clock forward to `at` without firing anything. */
  moveTo(at: number): void;
  /** Cancels every timer; nothing fires afterwards. */
  stop(): void;
}

/** A setTimeout delay above 2^31-1 ms fires at once, so long timers are re-armed in steps. */
const MAX_TIMEOUT_MS = 2_147_483_647;

interface VirtualTimer extends PendingTimer {
  readonly seq: number;
  readonly fire: () => void;
}

function createVirtualClock(start: number): DriverClock {
  let now = start;
  let seq = 0;
  let stopped = false;
  const timers = new Map<number, VirtualTimer>();
  const ordered = (): VirtualTimer[] =>
    [...timers.values()].sort((a, b) => a.fireAt - b.fireAt || a.seq - b.seq);
  return {
    mode: 'virtual',
    now: () => now,
    schedule(fireAt, owner, fire) {
      if (stopped) return () => undefined;
      const timer: VirtualTimer = { fireAt, owner, fire, seq: seq++ };
      timers.set(timer.seq, timer);
      if (fireAt <= now) {
        // Already due: fire without waiting for anyone to move the clock, but never synchronously
        // inside the caller's bookkeeping. It stays listed until then, so fireNext may take it first.
        queueMicrotask(() => {
          if (timers.delete(timer.seq)) fire();
        });
      }
      return () => {
        timers.delete(timer.seq);
      };
    },
    pending: () => ordered().map(({ fireAt, owner }) => ({ fireAt, owner })),
    fireNext() {
      const [next] = ordered();
      if (!next || stopped) return false;
      timers.delete(next.seq);
      now = Math.max(now, next.fireAt);
      next.fire();
      return true;
    },
    moveTo(at) {
      now = Math.max(now, at);
    },
    stop() {
      stopped = true;
      timers.clear();
    },
  };
}

function createRealClock(): DriverClock {
  const handles = new Set<NodeJS.Timeout>();
  let stopped = false;
  const unsupported = (what: string): never => {
    throw new Error(`${what} needs the virtual clock`);
  };
  return {
    mode: 'real',
    now: () => Date.now(),
    schedule(fireAt, _owner, fire) {
      let handle: NodeJS.Timeout | undefined;
      const arm = (): void => {
        if (stopped) return;
        const delay = Math.min(Math.max(0, fireAt - Date.now()), MAX_TIMEOUT_MS);
        handle = setTimeout(() => {
          if (handle) handles.delete(handle);
          if (fireAt > Date.now()) arm();
          else fire();
        }, delay);
        // Kept referenced: a retry backoff may be the only thing a run waits for, and an unref'd
        // timer would let Node's event loop empty and the process exit in the middle of the run.
        // stop() clears every timer, so a finished run still exits at once.
        handles.add(handle);
      };
      arm();
      return () => {
        if (handle) {
          clearTimeout(handle);
          handles.delete(handle);
        }
        handle = undefined;
      };
    },
    pending: () => unsupported('pending()'),
    fireNext: () => unsupported('fireNext()'),
    moveTo: () => unsupported('moveTo()'),
    stop() {
      stopped = true;
      for (const handle of handles) clearTimeout(handle);
      handles.clear();
    },
  };
}

export function createDriverClock(option: ClockOption): DriverClock {
  return option.mode === 'virtual' ? createVirtualClock(option.start ?? Date.now()) : createRealClock();
}
