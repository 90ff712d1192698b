/** What a bulk replay or a discard takes, and the order a bulk replay sends in (src/services/operations/recovery.ts). */
import {
  MAX_MESSAGE_IDS,
  MAX_WHY_LENGTH,
  parseBulkReplay,
  parseDiscard,
  parseOrderReplay,
  replayOrder,
} from '../../src/services/operations/recovery';
import { parkedAsRead } from '../support/parked';
import { created, added } from '../support/e2e';

const error = (parsed: { ok: boolean; error?: string }): string | undefined =>
  parsed.ok ? undefined : parsed.error;

describe('a bulk replay request', () => {
  it('takes a source and a selection, times as ISO text', () => {
    expect(
      parseBulkReplay({
        source: 'deadletter',
        queue: 'ledger',
        from: '2026-01-01T00:00:00Z',
        to: '2026-01-02T00:00:00Z',
      }),
    ).toEqual({
      ok: true,
      request: {
        source: { source: 'deadletter', queues: ['ledger'] },
        filter: { from: Date.parse('2026-01-01T00:00:00Z'), to: Date.parse('2026-01-02T00:00:00Z') },
        dryRun: false,
        force: false,
      },
    });
    expect(parseBulkReplay({ source: 'deadletter', orderId: 'O-1', force: true })).toMatchObject({
      ok: true,
      request: { source: { queues: ['ledger', 'order-transactions'] }, force: true },
    });
  });

  it('refuses what it cannot take, naming the field', () => {
    expect(error(parseBulkReplay(undefined))).toContain('JSON object');
    expect(
      error(parseBulkReplay({ source: 'parked', from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' })),
    ).toBe('from must not be after to');
    expect(error(parseBulkReplay({ source: 'parked', orderId: 7 }))).toBe(
      'orderId must be a non-empty string, got 7',
    );
    expect(error(parseBulkReplay({ source: 'parked', force: 1, reason: 'x' }))).toBe(
      'force must be true or false, got 1',
    );
    expect(error(parseBulkReplay({ source: 'parked', ['__proto__']: 'x' }))).toBeDefined();
  });

  it('an order replay takes only dryRun', () => {
    expect(parseOrderReplay(undefined)).toEqual({ ok: true, request: { dryRun: false } });
    expect(parseOrderReplay({ dryRun: true })).toEqual({ ok: true, request: { dryRun: true } });
    expect(error(parseOrderReplay({ force: true }))).toBe('unknown field force; the fields are dryRun');
  });
});

describe('a discard request', () => {
  const base = { source: 'parked', why: 'test data' };

  it('needs a why of at most MAX_WHY_LENGTH characters and a selection', () => {
    expect(error(parseDiscard({ source: 'parked', messageIds: ['m'] }))).toContain('why is required');
    expect(error(parseDiscard({ ...base, messageIds: ['m'], why: '   ' }))).toContain('why is required');
    expect(error(parseDiscard({ ...base, messageIds: ['m'], why: 'x'.repeat(MAX_WHY_LENGTH + 1) }))).toBe(
      `why must be at most ${MAX_WHY_LENGTH} characters, got ${MAX_WHY_LENGTH + 1}`,
    );
    expect(error(parseDiscard(base))).toContain('give at least one of messageIds, reason, from, to, orderId');
    expect(parseDiscard({ ...base, messageIds: ['m'], why: 'x'.repeat(MAX_WHY_LENGTH) }).ok).toBe(true);
  });

  it('takes from 1 to MAX_MESSAGE_IDS non-empty ids', () => {
    for (const messageIds of [
      [],
      [''],
      [3],
      'm',
      Array.from({ length: MAX_MESSAGE_IDS + 1 }, (_, i) => `m${i}`),
    ]) {
      expect(error(parseDiscard({ ...base, messageIds }))).toContain('messageIds must be a list of 1 to');
    }
    expect(parseDiscard({ ...base, messageIds: ['a', 'b'] })).toMatchObject({
      ok: true,
      request: { filter: { messageIds: ['a', 'b'] }, why: 'test data' },
    });
  });
});

describe('the order a bulk replay sends in', () => {
  const park = (entry: ReturnType<typeof created>, at: number, sequenceNumber: string) => ({
    ...parkedAsRead(
      {
        fromQueue: 'order-transactions',
        messageId: entry.transactionId,
        sessionId: entry.orderId,
        body: entry,
        transactionId: entry.transactionId,
        reason: 'rejected',
        description: 'test',
      },
      at,
    ),
    sequenceNumber,
  });

  it("puts each order's entries in sequence order, orders by their oldest held message", () => {
    const b2 = park(added('O-B', 'T-B2', 2), 1000, '1');
    const a3 = park(added('O-A', 'T-A3', 3), 2000, '2');
    const b1 = park(created('O-B', 'T-B1'), 3000, '3');
    const a2 = park(added('O-A', 'T-A2', 2), 4000, '4');
    expect(replayOrder([b2, a3, b1, a2]).map((m) => m.messageId)).toEqual(['T-B1', 'T-B2', 'T-A2', 'T-A3']);
  });
});
