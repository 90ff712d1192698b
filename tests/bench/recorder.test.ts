/**
 * The bench's recorder (bench/recorder.ts): what it counts for a row from the applications it is
 * told of: ordering violations, double effects, distinct entries applied and their latencies.
 */
import { createRecorder } from '../../bench/recorder';
import { generateBenchWorkload } from '../../bench/workload';

const workload = generateBenchWorkload({
  orders: 3,
  entriesPerOrder: 3,
  batchSize: 2,
  activeOrders: 2,
  seed: 1,
});
const [first, second, third] = [...workload.transactionIds.keys()];

describe('createRecorder', () => {
  it('counts an entry applied before its predecessor as a violation, a second application as a double', () => {
    const recorder = createRecorder(workload);
    for (const message of workload.ledger) recorder.sent(message, 10);
    for (const sequence of [1, 2, 3]) recorder.applied(first, sequence, undefined, 20 + sequence);
    recorder.applied(second, 2, undefined, 30);
    recorder.applied(second, 1, undefined, 31);
    recorder.applied(third, 1, undefined, 40);
    recorder.applied(third, 1, undefined, 41);
    const result = recorder.result();
    expect(result.orderingViolations).toBe(1);
    expect(result.doubleEffects).toBe(1);
    expect(result.messages).toBe(6);
    // The first application's time less its ledger message's send: the double's is not counted again.
    expect(result.latencies).toEqual([11, 12, 13, 20, 21, 30]);
    expect(recorder.lastAppliedAt()).toBe(41);
  });

  it("takes the caller's word on the predecessor when it gives one", () => {
    const recorder = createRecorder(workload);
    recorder.applied(first, 2, true, 1);
    recorder.applied(second, 1, false, 2);
    expect(recorder.result().orderingViolations).toBe(1);
  });

  it('refuses an entry the workload does not have', () => {
    const recorder = createRecorder(workload);
    expect(() => recorder.applied(first, 4, undefined, 1)).toThrow(`no entry ${first} #4`);
    expect(() => recorder.applied(first, 0, undefined, 1)).toThrow(`no entry ${first} #0`);
    expect(() => recorder.applied('O-none', 1, undefined, 1)).toThrow('no entry O-none #1');
  });

  it('counts entries never applied as neither applied nor late', () => {
    const recorder = createRecorder(workload);
    recorder.applied(third, 1, undefined, 5);
    expect(recorder.result()).toMatchObject({ messages: 1, orderingViolations: 0, doubleEffects: 0 });
  });
});
