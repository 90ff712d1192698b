/**
 * The per-entry account (local/entry-account.ts) on sources made by hand: a dead letter of an entry
 * whose write committed is counted once, and waits for its replay only while its order owes an
 * effect that replay would do; a ledger message dropped by duplicate detection is named as such.
 */
import { entryDigest, entryMessageId } from '../../src/domain/digest';
import type { Entry } from '../../src/domain/entry';
import type { SlotOutcome, TransactionRecord } from '../../src/domain/order';
import type { Outbox } from '../../src/services/order-documents';
import {
  buildAccount,
  owedEffects,
  type AccountSources,
  type HeldMessage,
  type OwedEffects,
} from '../../local/entry-account';
import { added, created, ledger } from '../support/e2e';

const idOf = (entry: Entry): string => entryMessageId(entry.transactionId, entryDigest(entry));

function sources(
  inputs: AccountSources['inputs'],
  {
    records = [],
    owed = {},
    deadLettered = [],
    parked = [],
    dropped = [],
  }: {
    records?: Array<[Entry, SlotOutcome]>;
    owed?: Record<string, OwedEffects>;
    deadLettered?: Entry[];
    parked?: Entry[];
    dropped?: number[];
  } = {},
): AccountSources {
  const byKey = new Map<string, TransactionRecord>(
    records.map(([entry, outcome]) => [
      `${entry.orderId}\u0000${entry.transactionId}`,
      { transactionId: entry.transactionId, digest: entryDigest(entry), sequence: entry.sequence, outcome },
    ]),
  );
  return {
    inputs,
    droppedLedgerMessages: new Set(dropped),
    recordOf: async (orderId, transactionId) => byKey.get(`${orderId}\u0000${transactionId}`),
    owedEffects: new Map(Object.entries(owed)),
    parkedIds: new Set(parked.map(idOf)),
    deadLetteredEntryIds: new Set(deadLettered.map(idOf)),
    deadLetteredLedgerIds: new Set(),
  };
}

const first = created('O-1', 'T-1');
const second = added('O-1', 'T-2', 2);
const rejectedEntry = added('O-1', 'T-3', 3);
const parkOf = (entry: Entry): HeldMessage => ({ messageId: idOf(entry), body: entry });
const nothingOwed = { parks: [], sagaStart: false };

describe('buildAccount: an entry dead-lettered after its write committed', () => {
  const inputs = [ledger('B-1', [first, second])];
  const applied: Array<[Entry, SlotOutcome]> = [
    [first, 'applied'],
    [second, 'applied'],
  ];

  it('counts by its outcome once, the dead letter noted, when its order owes nothing', async () => {
    const result = await buildAccount(sources(inputs, { records: applied, deadLettered: [second] }));
    expect(result.account).toMatchObject({ entries: 2, applied: 2, deadLettered: 0 });
    expect(result.deadLetteredAfterOutcome).toBe(1);
  });

  it('is dead-lettered, waiting for its replay, while its order owes the saga start', async () => {
    const owed = { 'O-1': { ...nothingOwed, sagaStart: true } };
    const result = await buildAccount(sources(inputs, { records: applied, deadLettered: [second], owed }));
    expect(result.account).toMatchObject({ entries: 2, applied: 1, deadLettered: 1 });
    expect(result.deadLetteredAfterOutcome).toBe(0);
  });

  it('a park owed to another dead-lettered entry waits for that one alone', async () => {
    const withRejected = [ledger('B-1', [first, second, rejectedEntry])];
    const result = await buildAccount(
      sources(withRejected, {
        records: [...applied, [rejectedEntry, 'rejected']],
        deadLettered: [second, rejectedEntry],
        owed: { 'O-1': { ...nothingOwed, parks: [parkOf(rejectedEntry)] } },
      }),
    );
    expect(result.account).toMatchObject({ entries: 3, applied: 2, parked: 0, deadLettered: 1 });
    expect(result.deadLetteredAfterOutcome).toBe(1);
  });

  it('a park owed to an entry whose own message is done waits for any dead letter of its order', async () => {
    const withRejected = [ledger('B-1', [first, second, rejectedEntry])];
    const result = await buildAccount(
      sources(withRejected, {
        records: [...applied, [rejectedEntry, 'rejected']],
        deadLettered: [second],
        owed: { 'O-1': { ...nothingOwed, parks: [parkOf(rejectedEntry)] } },
      }),
    );
    expect(result.account).toMatchObject({ entries: 3, applied: 1, parked: 1, deadLettered: 1 });
    expect(result.deadLetteredAfterOutcome).toBe(0);
  });

  it('buffered or parked and dead-lettered as well: counted by that outcome, noted', async () => {
    const waiting = added('O-1', 'T-5', 5);
    const result = await buildAccount(
      sources([ledger('B-1', [waiting, rejectedEntry])], {
        records: [[waiting, 'buffered']],
        parked: [rejectedEntry],
        deadLettered: [waiting, rejectedEntry],
      }),
    );
    expect(result.account).toMatchObject({ entries: 2, buffered: 1, parked: 1, deadLettered: 0 });
    expect(result.deadLetteredAfterOutcome).toBe(2);
  });
});

describe('owedEffects: what a stored outbox lists, less what was done', () => {
  const start = { orderId: 'O-1', customerId: 'C-1', currency: 'EUR', total: 100, correlationId: null };
  const park = {
    fromQueue: 'order-transactions',
    messageId: `replay-d7:${idOf(rejectedEntry)}`,
    sessionId: 'O-1',
    body: rejectedEntry,
    transactionId: 'T-3',
    reason: 'rejected' as const,
    description: 'test',
  };
  const outbox = (parts: Partial<Outbox>): Outbox => ({ parks: [], startFulfillment: null, ...parts });

  it('a saga start the order has a saga for is done; one without, owed', () => {
    expect(owedEffects(outbox({ startFulfillment: start }), new Set(), true)).toBeUndefined();
    expect(owedEffects(outbox({ startFulfillment: start }), new Set(), false)).toEqual({
      parks: [],
      sagaStart: true,
    });
    expect(owedEffects(null, new Set(), false)).toBeUndefined();
  });

  it('a park is done when the parked queue holds it, by its messageId or its entry', () => {
    expect(owedEffects(outbox({ parks: [park] }), new Set([park.messageId]), false)).toBeUndefined();
    expect(owedEffects(outbox({ parks: [park] }), new Set([idOf(rejectedEntry)]), false)).toBeUndefined();
    expect(owedEffects(outbox({ parks: [park] }), new Set(['T-3:other']), false)).toEqual({
      parks: [{ messageId: park.messageId, body: rejectedEntry }],
      sagaStart: false,
    });
  });
});

describe('buildAccount: ledger messages dropped by duplicate detection', () => {
  it('an entry repeating one of the input is a duplicate; one that repeats none was dropped, not seen', async () => {
    const other = created('O-2', 'T-21');
    const inputs = [
      ledger('B-1', [first]),
      ledger('B-1', [first, other]),
      // Sent again under a new messageId, the entry the dropped one lost arrives.
      ledger('B-2', [other]),
    ];
    const result = await buildAccount(
      sources(inputs, {
        dropped: [1],
        records: [
          [first, 'applied'],
          [other, 'applied'],
        ],
      }),
    );
    expect(result.account).toEqual({
      entries: 4,
      applied: 2,
      duplicate: 1,
      parked: 0,
      buffered: 0,
      deadLettered: 0,
      droppedByDuplicateDetection: 1,
    });
    expect(result.ledgerMessages).toBe(3);
    expect([...result.ledgerMessageIds]).toEqual(['B-1', 'B-2']);
  });

  it('a reused messageId the queue accepted (past its window) is accounted as any other message', async () => {
    const other = created('O-2', 'T-21');
    const result = await buildAccount(
      sources([ledger('B-1', [first]), ledger('B-1', [other])], {
        records: [
          [first, 'applied'],
          [other, 'applied'],
        ],
      }),
    );
    expect(result.account).toMatchObject({
      entries: 2,
      applied: 2,
      duplicate: 0,
      droppedByDuplicateDetection: 0,
    });
  });
});
