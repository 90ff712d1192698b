import { simulateSessions } from '../../bench/session-model';
import { formatSessionTable, sessionTable, SESSION_TABLE_DEFAULTS } from '../../bench/session-table';
import { BENCH_USAGE, parseBenchArgs } from '../../bench/args';

// Every step of an entry in `handlerMs`, none in its receive or completion: the shape of the model
// before prefetch, which these first tests keep.
const settings = {
  maxConcurrentSessions: 1,
  sessionIdleTimeoutMs: 500,
  prefetchCount: 0,
  acceptMs: 2,
  receiveMs: 0,
  handlerMs: 2,
  completeMs: 0,
};

describe('the session model (virtual time)', () => {
  it('holds a drained session for the idle timeout before it accepts the next', () => {
    const run = simulateSessions(
      new Map([
        ['A', [0]],
        ['B', [0]],
      ]),
      settings,
    );
    // A: accepted at 0, handled 2..4, held 4..504; only then is B accepted.
    expect(run.acceptLog).toEqual([
      { sessionId: 'A', atMs: 0 },
      { sessionId: 'B', atMs: 504 },
    ]);
    expect(run.heldIdleMs).toBe(1000);
    expect(run.makespanMs).toBe(508);
  });

  it('closes a drained session at once with an idle timeout of 0', () => {
    const run = simulateSessions(
      new Map([
        ['A', [0]],
        ['B', [0]],
      ]),
      { ...settings, sessionIdleTimeoutMs: 0 },
    );
    expect(run.acceptLog.map((accept) => accept.atMs)).toEqual([0, 4]);
    expect(run.heldIdleMs).toBe(0);
  });

  it('serves a message that arrives during the hold without a second accept', () => {
    const held = simulateSessions(new Map([['A', [0, 300]]]), settings);
    expect(held.accepts).toBe(1);
    expect(held.heldIdleMs).toBe(296 + 500);
    const released = simulateSessions(new Map([['A', [0, 300]]]), { ...settings, sessionIdleTimeoutMs: 100 });
    expect(released.accepts).toBe(2);
    expect(released.acceptLog[1]).toEqual({ sessionId: 'A', atMs: 300 });
  });

  it('takes at most maxConcurrentSessions sessions at once, one message at a time each', () => {
    const arrivals = new Map(Array.from({ length: 6 }, (_, i) => [`S${i}`, [0, 0, 0]] as const));
    const run = simulateSessions(arrivals, {
      ...settings,
      maxConcurrentSessions: 3,
      sessionIdleTimeoutMs: 0,
    });
    expect(run.messages).toBe(18);
    expect(run.accepts).toBe(6);
    // Two waves of 3 sessions, each an accept and three handlers: 8 ms a wave.
    expect(run.makespanMs).toBe(16);
  });

  it('refuses a negative prefetch count or time, and no session at all', () => {
    const one = new Map([['A', [0]]]);
    expect(() => simulateSessions(one, { ...settings, prefetchCount: -1 })).toThrow(RangeError);
    expect(() => simulateSessions(one, { ...settings, prefetchCount: 1.5 })).toThrow(RangeError);
    expect(() => simulateSessions(one, { ...settings, completeMs: -1 })).toThrow(RangeError);
    expect(() => simulateSessions(one, { ...settings, maxConcurrentSessions: 0 })).toThrow(RangeError);
  });

  it('gives a burst of short orders about sessions / (idle timeout + accept + entries) orders per second', () => {
    const rows = sessionTable({
      ...SESSION_TABLE_DEFAULTS,
      orders: 64,
      idleTimeoutsMs: [500],
      sessions: [16],
    });
    const burst = rows.find((row) => row.arrival === 'burst');
    // Four waves of 16 orders, each an accept and 10 entries of 3 round trips (receive, store,
    // completion); the last wave's hold comes after its last entry.
    expect(burst?.seconds).toBeCloseTo((3 * (2 + 60 + 500) + 62) / 1000, 6);
    expect(burst?.acceptsPerEntry).toBeCloseTo(0.1);
  });

  it('is a table of every arrival x idle timeout x sessions cell, printed by default and skipped on request', () => {
    const options = { ...SESSION_TABLE_DEFAULTS, orders: 16, idleTimeoutsMs: [0, 100], sessions: [4, 8] };
    const rows = sessionTable(options);
    expect(rows.map((row) => [row.arrival, row.sessionIdleTimeoutMs, row.maxConcurrentSessions])).toEqual([
      ['burst', 0, 4],
      ['burst', 0, 8],
      ['burst', 100, 4],
      ['burst', 100, 8],
      ['trickle', 0, 4],
      ['trickle', 0, 8],
      ['trickle', 100, 4],
      ['trickle', 100, 8],
    ]);
    // Trickle: 250 ms between an order's entries, so a 100 ms hold closes the session between them
    // and each entry pays an accept, unless the holds fall behind the arrivals (4 sessions) and a
    // session gathers entries meanwhile.
    const accepts = (idle: number, sessions: number): number | undefined =>
      rows.find(
        (row) =>
          row.arrival === 'trickle' &&
          row.sessionIdleTimeoutMs === idle &&
          row.maxConcurrentSessions === sessions,
      )?.acceptsPerEntry;
    expect([accepts(0, 4), accepts(0, 8), accepts(100, 8)]).toEqual([1, 1, 1]);
    expect(accepts(100, 4)).toBeLessThan(1);
    expect(rows.filter((row) => row.arrival === 'burst').map((row) => row.acceptsPerEntry)).toEqual([
      0.1, 0.1, 0.1, 0.1,
    ]);
    expect(formatSessionTable(options, rows)).toMatch(/burst\s+100\s+8\s+\d+/);
    expect(BENCH_USAGE).toContain('--no-sessions-table');
    expect(parseBenchArgs(['--no-sessions-table']).options).toEqual({ sessionsTable: false });
  });
});

describe('prefetch in the session model', () => {
  // Azure-like: a receive and a completion one 10 ms round trip each, the store batch 7 ms.
  const azure = {
    maxConcurrentSessions: 1,
    sessionIdleTimeoutMs: 50,
    prefetchCount: 0,
    acceptMs: 10,
    receiveMs: 10,
    handlerMs: 7,
    completeMs: 10,
  };
  const burst = new Map([['A', [0, 0, 0, 0]]]);

  it('without prefetch, every message waits for its receive round trip', () => {
    const run = simulateSessions(burst, azure);
    // Accept 0..10; each message a receive, the batch and the completion: 27 ms.
    expect(run.makespanMs).toBe(10 + 4 * 27);
    expect(run.receivingMs).toBe(40);
    expect(run.handlingMs).toBe(4 * 17);
  });

  it('with prefetch, only the first message after an accept waits for a transfer', () => {
    const run = simulateSessions(burst, { ...azure, prefetchCount: 2 });
    // The first is pushed one round trip after the accept; the rest were pushed meanwhile.
    expect(run.makespanMs).toBe(10 + 10 + 4 * 17);
    expect(run.receivingMs).toBe(10);
    expect(run.accepts).toBe(1);
  });

  it('refills the buffer as the function takes messages: with a handler shorter than a push, prefetch 1 waits', () => {
    const quick = { ...azure, prefetchCount: 1, handlerMs: 0, completeMs: 4 };
    // Message i+1 gets its credit when i is taken, and arrives a round trip (10 ms) later, while
    // the function and its completion take 4: each later message waits 6 ms for its push.
    expect(simulateSessions(burst, quick).makespanMs).toBe(10 + 10 + 4 + 3 * 10);
    // Two in the buffer cover the push.
    expect(simulateSessions(burst, { ...quick, prefetchCount: 2 }).makespanMs).toBeLessThan(
      simulateSessions(burst, quick).makespanMs,
    );
  });

  it('still holds a drained session for the idle timeout before the next accept', () => {
    const run = simulateSessions(
      new Map([
        ['A', [0]],
        ['B', [0]],
      ]),
      { ...azure, prefetchCount: 4 },
    );
    // A: accepted 0..10, pushed 20, done 37, held to 87; B accepted then.
    expect(run.acceptLog).toEqual([
      { sessionId: 'A', atMs: 0 },
      { sessionId: 'B', atMs: 87 },
    ]);
    expect(run.heldIdleMs).toBe(100);
  });

  it('serves a message that reaches the broker within the idle timeout, and closes the session when it comes later', () => {
    const within = simulateSessions(new Map([['A', [0, 60]]]), { ...azure, prefetchCount: 4 });
    // Done at 37; the second arrives at 60, within 37 + 50, pushed at 70.
    expect(within.accepts).toBe(1);
    expect(within.makespanMs).toBe(70 + 17);
    const later = simulateSessions(new Map([['A', [0, 120]]]), { ...azure, prefetchCount: 4 });
    expect(later.accepts).toBe(2);
    expect(later.acceptLog[1]).toEqual({ sessionId: 'A', atMs: 120 });
  });
});
