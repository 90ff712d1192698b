/**
 * A pump lets the event loop turn between deliveries whose handler did not, as the real host's
 * next receive is network I/O. Otherwise a pump whose handler never waits on a timer (the ledger
 * processor's, or any at zero store latency) works through its whole backlog in one turn, and
 * every timer waits: the other pumps' store round trips, and lock renewal. A handler that did
 * wait (on a store round trip) goes straight on, so the turn costs nothing where none is needed.
 */
let loopTurns = 0;
let turnWatched = false;

/** The turns counted so far; the next one the event loop takes will count. */
export function currentTurn(): number {
  if (!turnWatched) {
    turnWatched = true;
    setImmediate(() => {
      turnWatched = false;
      loopTurns += 1;
    });
  }
  return loopTurns;
}

export async function turnSince(turn: number): Promise<void> {
  if (loopTurns !== turn) return;
  await new Promise((resolve) => setImmediate(resolve));
}
