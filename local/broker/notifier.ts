/**
 * Who hears that messages of a queue became available. Listeners run in a microtask so that they
 * never see the broker halfway through an operation.
 */
import type { AvailabilityListener } from './types';

export class Notifier {
  private readonly listeners = new Set<AvailabilityListener>();
  private readonly pending = new Set<string>();
  private scheduled = false;

  get listening(): boolean {
    return this.listeners.size > 0;
  }

  add(listener: AvailabilityListener): void {
    this.listeners.add(listener);
  }

  remove(listener: AvailabilityListener): void {
    this.listeners.delete(listener);
  }

  clear(): void {
    this.listeners.clear();
  }

  notify(queue: string): void {
    if (this.listeners.size === 0) return;
    this.pending.add(queue);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      const names = [...this.pending];
      this.pending.clear();
      for (const name of names) {
        for (const listener of [...this.listeners]) {
          try {
            listener(name);
          } catch {
            // A listener's failure is its own; the broker's state is already consistent.
          }
        }
      }
    });
  }
}
