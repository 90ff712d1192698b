/**
 * Faults aimed at one order (`name@ORDER`, local/faults.ts) and the recycle fault: a completion lost
 * with the instance's memory is answered by the store's 409, one lost with the memory kept by the
 * consumer's cache.
 */
import { parseFaults } from '../../local/faults';
import { added, created, FAST, ledger, runToEnd } from '../support/e2e';

describe('parseFaults: name@ORDER', () => {
  it('aims crashAfterCommit and recycleAfterCommit at orders, beside the drawn faults', () => {
    expect(parseFaults('recycleAfterCommit@O-26,crashAfterCommit=0.1,crashAfterCommit@O/23')).toEqual({
      crashAfterCommit: 0.1,
      at: { recycleAfterCommit: ['O-26'], crashAfterCommit: ['O/23'] },
    });
  });

  it.each([
    ['duplicate@O-1', /only crashAfterCommit and recycleAfterCommit can be aimed/],
    ['recycleAfterCommit@', /needs an order id/],
    ['recycleAfterCommit@O-1,recycleAfterCommit@O-1', /given twice/],
  ])('refuses %s', (spec, problem) => {
    expect(() => parseFaults(spec)).toThrow(problem);
  });
});

describe('a completion lost after the commit, aimed at one order', () => {
  const inputs = [
    ledger('B-1', [created('O-1', 'T-1'), added('O-1', 'T-2', 2, 1, 100, true), created('O-2', 'T-3')]),
  ];

  it('recycleAfterCommit: once, the redelivery meets a fresh instance and the store refuses its record (409), a duplicate', async () => {
    const run = await runToEnd(inputs, { ...FAST, faults: { at: { recycleAfterCommit: ['O-1'] } } });
    expect(run.host.byFunction.orderTransactions.crashesInjected).toBe(1);
    expect(run.report.stats.recordConflicts).toEqual({ duplicate: 1, digestMismatch: 0 });
    expect(run.report.stats.duplicates).toBe(1);
    expect(run.report.stats.account).toMatchObject({ entries: 3, applied: 3 });
  });

  it('crashAfterCommit: the instance keeps its cache, which answers the redelivery before any write', async () => {
    const run = await runToEnd(inputs, { ...FAST, faults: { at: { crashAfterCommit: ['O-1'] } } });
    expect(run.host.byFunction.orderTransactions.crashesInjected).toBe(1);
    expect(run.report.stats.recordConflicts).toEqual({ duplicate: 0, digestMismatch: 0 });
    expect(run.report.stats.duplicates).toBe(1);
  });
});
