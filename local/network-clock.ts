/**
 * Simulated network waits that end when they are due, not when the next millisecond timer tick
 * comes round.
 *
 * `setTimeout(resolve, 2)` is a poor model of a 2 ms store round trip: Node keeps timers in whole
 * milliseconds of a loop time cached at the start of each turn, so the wait ends up to a
 * millisecond late (2.1 ms on average on an idle loop here, 2.8 ms as the bench's consumers saw it
 * at 16 sessions), and waits begun in one millisecond all end in the same turn, so their callers
 * then queue for the CPU together. A real response arrives as I/O, whenever its bytes do. This
 * clock does the same: a worker thread sleeps until the earliest due wait (`Atomics.wait`,
 * sub-millisecond) and posts a message, which the main thread receives as an I/O event and
 * resolves every wait that is due by then.
 *
 * The worker only sleeps and posts; the waiting and everything after it stays on the main thread.
 * Tried and measured worse (16 sessions, 2 ms): notifying the main thread through
 * `Atomics.waitAsync`; a ring of due times the worker works through on its own; a worker that polls
 * after each post instead of being woken. Each saved the main thread a few microseconds per wait
 * and lost 2 to 4 points of efficiency: how soon the worker hears of the next due time matters more.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

export interface NetworkClock {
  /** Resolves `ms` milliseconds from now, within the wake-up latency of a thread. */
  wait(ms: number): Promise<void>;
  /** Waits not yet due. */
  readonly pending: number;
  /** How early the worker wakes, to make up for what waking it and delivering its message costs. */
  readonly leadMs: number;
  /** Stops the worker; waits not yet due never resolve. */
  close(): Promise<void>;
}

/** Worker side: sleep until the published deadline or a newer publication, post once per publication. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const generation = new Int32Array(workerData, 0, 1);
const deadline = new Float64Array(workerData, 8, 1);
const lead = new Float64Array(workerData, 16, 1);
let firedFor = -1;
for (;;) {
  const seen = Atomics.load(generation, 0);
  if (seen < 0) break;
  const due = deadline[0];
  if (seen === firedFor || !(due < Infinity)) {
    Atomics.wait(generation, 0, seen);
    continue;
  }
  const remaining = due - lead[0] - (performance.timeOrigin + performance.now());
  if (remaining > 0) {
    Atomics.wait(generation, 0, seen, remaining);
    continue;
  }
  firedFor = seen;
  parentPort.postMessage(seen);
}
`;

interface Waiting {
  due: number;
  resolve: () => void;
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across threads. */
function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

function startNetworkClock(): NetworkClock & { setLead(ms: number): void } {
  const shared = new SharedArrayBuffer(24);
  const generation = new Int32Array(shared, 0, 1);
  const deadline = new Float64Array(shared, 8, 1);
  const lead = new Float64Array(shared, 16, 1);
  lead[0] = 0;
  deadline[0] = Infinity;
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: shared });
  worker.unref();

  // Ordered by `due`; with one latency for every wait (the usual case) a push keeps the order.
  const queue: Waiting[] = [];
  let head = 0;

  const publish = (): void => {
    deadline[0] = head < queue.length ? queue[head].due : Infinity;
    Atomics.add(generation, 0, 1);
    Atomics.notify(generation, 0);
  };

  worker.on('message', () => {
    const now = epochMs();
    while (head < queue.length && queue[head].due <= now) {
      queue[head].resolve();
      head += 1;
    }
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
      // Nothing pending: let the process exit as it would with no timer armed.
      worker.unref();
    } else if (head > 1024) {
      queue.splice(0, head);
      head = 0;
    }
    publish();
  });

  const insert = (waiting: Waiting): boolean => {
    let at = queue.length;
    while (at > head && queue[at - 1].due > waiting.due) at -= 1;
    if (at === queue.length) queue.push(waiting);
    else queue.splice(at, 0, waiting);
    return at === head;
  };

  return {
    setLead(ms: number): void {
      lead[0] = ms;
    },
    get leadMs(): number {
      return lead[0];
    },
    wait(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const wasEmpty = head === queue.length;
        if (insert({ due: epochMs() + ms, resolve })) {
          if (wasEmpty) worker.ref();
          publish();
        }
      });
    },
    get pending(): number {
      return queue.length - head;
    },
    async close(): Promise<void> {
      Atomics.store(generation, 0, -1);
      Atomics.notify(generation, 0);
      await worker.terminate();
    },
  };
}

const CALIBRATION_WAITS = 40;
/**
 * The most the worker wakes early. On an idle machine the wake costs about 0.17 ms; a calibration
 * that measures more was measuring a busy scheduler (31 ms was seen at load average 12), and a
 * worker that wakes that early only posts messages the main thread must answer with nothing due.
 */
export const MAX_LEAD_MS = 0.5;

/**
 * A clock whose worker wakes early by what it costs, on an idle main thread, to wake the worker
 * and deliver its message: measured here with waits of one millisecond, the lower quartile of
 * how late they ended. So a wait ends on time, or later when the main thread is busy, as a
 * response does.
 */
export async function createNetworkClock(): Promise<NetworkClock> {
  const clock = startNetworkClock();
  const late: number[] = [];
  for (let i = 0; i < CALIBRATION_WAITS; i += 1) {
    const start = performance.now();
    await clock.wait(1);
    late.push(performance.now() - start - 1);
  }
  late.sort((a, b) => a - b);
  clock.setLead(Math.min(MAX_LEAD_MS, Math.max(0, late[Math.floor(late.length / 4)])));
  return clock;
}
