/** Pumps waiting for a queue to have something for them: woken on availability, on stop, or by a timeout. */
export interface QueueWaiters {
  /** Resolves on the next availability in `queue`, on wakeAll, or after `timeoutMs`. */
  waitFor(queue: string, timeoutMs?: number): Promise<void>;
  wake(queue: string): void;
  wakeAll(): void;
}

export function createQueueWaiters(): QueueWaiters {
  const waiters = new Map<string, Set<() => void>>();
  const wake = (queue: string): void => {
    for (const done of [...(waiters.get(queue) ?? [])]) done();
  };
  return {
    waitFor(queue, timeoutMs) {
      return new Promise((resolve) => {
        let registered = waiters.get(queue);
        if (!registered) {
          registered = new Set();
          waiters.set(queue, registered);
        }
        const set = registered;
        let timer: NodeJS.Timeout | undefined;
        const done = (): void => {
          set.delete(done);
          if (timer) clearTimeout(timer);
          resolve();
        };
        set.add(done);
        if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs);
      });
    },
    wake,
    wakeAll() {
      for (const queue of waiters.keys()) wake(queue);
    },
  };
}
