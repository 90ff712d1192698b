/**
 * The built-in sample as a bare `npm start` runs it (samples/ledger.ndjson, samples/catalog.json and
 * the faults the sample declares, SAMPLE_FAULTS): each row of README.md's "What the sample shows",
 * checked on the run's report and its traces (which carry each delivery's verdict).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, SAMPLE_FAULTS } from '../../local/cli/start';
import type { Report, ReportOrder } from '../../local/report';
import type { SpanLine } from '../../local/trace-file';
import { expectAccountAddsUp } from '../support/account';

interface Delivery {
  orderId: string;
  messageId: string;
  outcome: string;
  parkReason: string | undefined;
}

let dir = '';
let report: Report;
let deliveries: Delivery[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'convoy-sample-'));
  const reportPath = join(dir, 'report.json');
  const tracesPath = join(dir, 'traces.ndjson');
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    expect(await main(['--report', reportPath, '--traces', tracesPath, '--quiet'])).toBe(0);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
  const spans = readFileSync(tracesPath, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SpanLine);
  deliveries = spans
    .filter((span) => span.name === 'process order-transactions')
    .map((span) => ({
      orderId: String(span.attributes['order.id']),
      messageId: String(span.attributes['messaging.message.id']),
      outcome: String(span.attributes['order.entry.outcome']),
      parkReason: span.attributes['order.entry.park_reason'] as string | undefined,
    }));
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const order = (orderId: string): ReportOrder => {
  const found = report.orders.find((each) => each.orderId === orderId);
  if (found === undefined) throw new Error(`no order ${orderId} in the report`);
  return found;
};
const deliveriesOf = (orderId: string): Delivery[] => deliveries.filter((each) => each.orderId === orderId);
const transactionOf = (messageId: string): string => messageId.slice(0, messageId.lastIndexOf(':'));
const parkedOf = (orderId: string): Array<[string | null, string]> =>
  report.parked
    .filter((parked) => parked.sessionId === orderId || parked.description.includes(orderId))
    .map((parked): [string | null, string] => [parked.transactionId, parked.reason])
    .sort();

describe('the sample (npm start with no arguments)', () => {
  it('declares its one fault through --faults: recycleAfterCommit aimed at O-26', () => {
    expect(SAMPLE_FAULTS).toBe('recycleAfterCommit@O-26');
  });

  it('the account: 33 entries, 22 applied, 2 duplicates, 8 parked, 1 buffered, none dead-lettered', () => {
    expectAccountAddsUp(report);
    expect(report.stats.account).toEqual({
      entries: 33,
      applied: 22,
      duplicate: 2,
      parked: 8,
      buffered: 1,
      deadLettered: 0,
      droppedByDuplicateDetection: 0,
    });
    expect(report.deadLettered).toEqual([]);
  });

  it('O-17: applied in order; its repeated T-1 and T-2 dropped by the broker, never delivered', () => {
    expect(order('O-17')).toMatchObject({
      status: 'submitted',
      appliedSequence: 4,
      saga: { status: 'completed' },
    });
    const seen = deliveriesOf('O-17');
    expect(seen.map((each) => each.outcome)).toEqual(['applied', 'applied', 'applied', 'applied']);
    expect(seen.map((each) => transactionOf(each.messageId)).sort()).toEqual(['T-1', 'T-2', 'T-3', 'T-4']);
  });

  it('O-18: its final entry arrives before sequence 3, is buffered, then released', () => {
    expect(order('O-18')).toMatchObject({
      appliedSequence: 4,
      waitingFor: null,
      saga: { status: 'completed' },
    });
    const final = deliveriesOf('O-18').filter((each) => transactionOf(each.messageId) === 'T-104');
    expect(final.map((each) => each.outcome)).toEqual(['buffered']);
  });

  it('O-19: T-202 reused with other content refused by the store (409) and parked digest-mismatch; an invalid entry and a rejected amendment parked; completed', () => {
    expect(order('O-19').saga).toEqual({ status: 'completed', reason: null });
    expect(parkedOf('O-19')).toEqual(
      [
        ['T-202', 'digest-mismatch'],
        ['T-204', 'rejected'],
      ].sort(),
    );
    expect(report.stats.recordConflicts.digestMismatch).toBe(1);
    // Parked by the ledger, before it had an order session.
    const invalid = report.parked.find((parked) => parked.transactionId === 'T-203');
    expect(invalid).toMatchObject({ queue: 'ledger', reason: 'invalid' });
    expect(invalid?.description).toMatch(/quantity/);
  });

  it('O-20: deleted at 3; a later entry rejected, another claiming slot 3 parked sequence-conflict; no saga', () => {
    expect(order('O-20')).toMatchObject({ status: 'deleted', saga: null });
    expect(parkedOf('O-20')).toEqual(
      [
        ['T-304', 'rejected'],
        ['T-305', 'sequence-conflict'],
      ].sort(),
    );
  });

  it('O-21 (unknown sku), O-22 (over the credit limit), O-27 (both carriers refuse): saga compensated', () => {
    for (const orderId of ['O-21', 'O-22', 'O-27']) {
      expect({ orderId, status: order(orderId).saga?.status }).toEqual({ orderId, status: 'compensated' });
    }
  });

  it('O/23: parked invalid by the ledger, naming the field; no order', () => {
    expect(report.orders.some((each) => each.orderId === 'O/23')).toBe(false);
    const parked = report.parked.find((each) => each.transactionId === 'T-601');
    expect(parked).toMatchObject({ queue: 'ledger', reason: 'invalid' });
    expect(parked?.description).toMatch(/orderId|currency/);
  });

  it('O-24 waits for sequence 1 with its entry buffered; O-25 rejected twice, pending', () => {
    expect(order('O-24')).toMatchObject({ status: 'pending', waitingFor: 1, saga: null });
    expect(order('O-25')).toMatchObject({ status: 'pending', saga: null });
    expect(parkedOf('O-25')).toEqual(
      [
        ['T-801', 'rejected'],
        ['T-802', 'rejected'],
      ].sort(),
    );
  });

  it('O-26: its first entry committed, the instance recycled before the completion; the redelivery refused by the store (409) and told a duplicate by its digest; completed', () => {
    expect(order('O-26')).toMatchObject({ status: 'submitted', saga: { status: 'completed' } });
    const byTransaction = new Map<string, string[]>();
    for (const each of deliveriesOf('O-26')) {
      const transactionId = transactionOf(each.messageId);
      byTransaction.set(transactionId, [...(byTransaction.get(transactionId) ?? []), each.outcome]);
    }
    expect(Object.fromEntries(byTransaction)).toEqual({
      'T-901': ['applied', 'duplicate'],
      'T-902': ['applied'],
    });
    expect(report.stats.recordConflicts.duplicate).toBe(1);
  });

  it('B-000006 and B-000007: ledger messages parked whole, invalid', () => {
    for (const messageId of ['B-000006', 'B-000007']) {
      expect(report.parked.find((each) => each.messageId === messageId)).toMatchObject({
        queue: 'ledger',
        reason: 'invalid',
      });
    }
    expect(report.stats.ledgerMessagesParkedWhole).toBe(2);
  });
});

describe('the sample with the completion lost and the instance kept (--faults crashAfterCommit@O-26)', () => {
  it("the consumer's cache answers the redelivery as a duplicate: no 409", async () => {
    const reportPath = join(dir, 'kept.json');
    const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['--faults', 'crashAfterCommit@O-26', '--report', reportPath, '--quiet'])).toBe(0);
    } finally {
      out.mockRestore();
    }
    const kept = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
    expect(kept.stats.recordConflicts).toEqual({ duplicate: 0, digestMismatch: 1 });
    expect(kept.stats.duplicates).toBe(report.stats.duplicates);
    expect(kept.orders).toEqual(report.orders);
  });
});
