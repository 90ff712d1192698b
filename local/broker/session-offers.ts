/**
 * Acceptance order across a queue's sessions: a min-heap of offers, so that accepting the next
 * session costs O(log n), not a scan of every session.
 */

/** What an offer needs of a session; the queue state's sessions are these. */
export interface OfferedSession {
  /** When a receiver last accepted it. */
  accepted: number;
}

/** A session as it was when it became available: valid while it still is, unchanged. */
export interface SessionOffer<S extends OfferedSession> {
  readonly session: S;
  readonly accepted: number;
  readonly head: number;
}

/** Least recently accepted first, then the oldest head: the broker's fairness across sessions. */
export function offerPrecedes(a: SessionOffer<OfferedSession>, b: SessionOffer<OfferedSession>): boolean {
  return a.accepted < b.accepted || (a.accepted === b.accepted && a.head < b.head);
}

export function pushOffer<S extends OfferedSession>(heap: SessionOffer<S>[], offer: SessionOffer<S>): void {
  let index = heap.push(offer) - 1;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!offerPrecedes(heap[index], heap[parent])) break;
    [heap[index], heap[parent]] = [heap[parent], heap[index]];
    index = parent;
  }
}

export function popOffer<S extends OfferedSession>(heap: SessionOffer<S>[]): SessionOffer<S> | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (top === undefined || last === undefined || heap.length === 0) return top;
  heap[0] = last;
  let index = 0;
  for (;;) {
    const left = 2 * index + 1;
    const right = left + 1;
    let first = index;
    if (left < heap.length && offerPrecedes(heap[left], heap[first])) first = left;
    if (right < heap.length && offerPrecedes(heap[right], heap[first])) first = right;
    if (first === index) return top;
    [heap[index], heap[first]] = [heap[first], heap[index]];
    index = first;
  }
}
