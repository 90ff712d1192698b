/**
 * Ids and sizes the contract allows work; what Service Bus would refuse is
 * parked with a reason, alone, and the rest goes on. Nothing dead-letters.
 */
import { entryMessage } from '../../src/domain/sequential-convoy';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../../src/services/message-size';
import type { Entry } from '../../src/domain/entry';
import { added, created, FAST, ledger, runToEnd } from '../support/e2e';

describe('limits of Service Bus, end to end', () => {
  it('parks alone an entry as large as the ledger message may be (its sku past the bound), keeping its size and hash, not its body; the others are applied', async () => {
    const batchId = 'B'.repeat(100);
    const orderId = 'O'.repeat(100);
    const big = (sku: string): Entry => ({
      transactionId: 'T'.repeat(100),
      orderId,
      sequence: 2,
      type: 'TransactionAdded',
      data: { sku, quantity: 1, unitPrice: 1 },
    });
    // As large as the ledger message may be, so that only the forwarded copy is over the limit.
    let skuLength = 261_000;
    const ledgerBytes = (sku: string): number =>
      estimateMessageBytes({ messageId: batchId, sessionId: 'main', body: { batchId, entries: [big(sku)] } });
    while (ledgerBytes('s'.repeat(skuLength + 1)) <= DEFAULT_MAX_MESSAGE_BYTES) skuLength += 1;
    const sku = 's'.repeat(skuLength);
    expect(estimateMessageBytes(entryMessage(big(sku), batchId, batchId))).toBeGreaterThan(
      DEFAULT_MAX_MESSAGE_BYTES,
    );

    const { report } = await runToEnd(
      [
        ledger('B-1', [created(orderId, 'T-1', 1), added(orderId, 'T-3', 3, 1, 100, true)]),
        ledger(batchId, [big(sku)]),
      ],
      FAST,
    );
    expect(report.deadLettered).toEqual([]);
    // The sku is over its bound, so the entry is invalid; its parked copy would be over the size
    // limit, so it keeps the body's size and hash instead, and nothing dead-letters.
    expect(report.parked).toEqual([
      expect.objectContaining({
        queue: 'ledger',
        reason: 'invalid',
        transactionId: 'T'.repeat(100),
        description: expect.stringMatching(/data\.sku must be at most 100 .*its body is not kept/),
      }),
    ]);
    expect(report.orders).toEqual([expect.objectContaining({ orderId, appliedSequence: 1, waitingFor: 2 })]);
  });

  it('parks whole a batch whose batchId is over 100 characters instead of dead-lettering it', async () => {
    const batchId = 'B'.repeat(127);
    const { report } = await runToEnd(
      [{ messageId: 'L-1', sessionId: 'main', body: { batchId, entries: [{ broken: true }] } }],
      FAST,
    );
    expect(report.deadLettered).toEqual([]);
    expect(report.parked).toEqual([
      expect.objectContaining({ queue: 'ledger', messageId: 'L-1', reason: 'invalid' }),
    ]);
  });

  it('keeps every park of two batches that share a batchId, and derives park ids within 128 characters', async () => {
    const batchId = 'B'.repeat(100);
    const { report } = await runToEnd(
      [
        { messageId: 'L-1', sessionId: 'main', body: { batchId, entries: [{ transactionId: 'X1' }] } },
        { messageId: 'L-2', sessionId: 'main', body: { batchId, entries: [{ transactionId: 'X2' }] } },
        // L-1's broken entry again, in another batch: the same content parks once.
        { messageId: 'L-3', sessionId: 'main', body: { batchId: 'B-3', entries: [{ transactionId: 'X1' }] } },
      ],
      FAST,
    );
    expect(report.deadLettered).toEqual([]);
    expect(report.parked.map((parked) => [parked.reason, parked.transactionId]).sort()).toEqual([
      ['invalid', 'X1'],
      ['invalid', 'X2'],
    ]);
    for (const parked of report.parked) expect(parked.messageId.length).toBeLessThanOrEqual(128);
  });

  it('takes ids Cosmos DB refuses as item ids (a transactionId or sku with / \\ ? #, a 100-character one): applied and fulfilled', async () => {
    const orderId = 'O-slash';
    const sku = 'a/b\\c?d#e';
    const { report } = await runToEnd(
      [
        ledger('B-1', [
          created(orderId, 'T/1?#', 1),
          { ...added(orderId, 'T\\2', 2, 2, 100, true), data: { sku, quantity: 2, unitPrice: 100 } },
        ]),
      ],
      { ...FAST, clock: { mode: 'virtual' }, catalog: { [sku]: 5 }, creditLimit: 10_000 },
    );
    expect(report.deadLettered).toEqual([]);
    expect(report.parked).toEqual([]);
    expect(report.orders).toEqual([
      expect.objectContaining({ orderId, status: 'submitted', saga: { status: 'completed', reason: null } }),
    ]);
  });

  it("takes on Premium's 1 MB limit a 300 KB ledger message that Standard's broker refuses, and parks its invalid entry with its body", async () => {
    const orderId = 'O-premium';
    const huge = {
      ...created(orderId, 'T-huge', 2),
      data: { customerId: 'C'.repeat(300 * 1024), currency: 'EUR' },
    };
    const input = ledger('B-1', [created(orderId, 'T-1', 1, true), huge]);
    expect(estimateMessageBytes(input)).toBeGreaterThan(DEFAULT_MAX_MESSAGE_BYTES);
    await expect(runToEnd([input], FAST)).rejects.toMatchObject({ serviceBusCode: 'MessageSizeExceeded' });

    const { report } = await runToEnd([input], { ...FAST, maxMessageBytes: 1_048_576 });
    expect(report.deadLettered).toEqual([]);
    expect(report.orders).toEqual([
      expect.objectContaining({ orderId, status: 'submitted', appliedSequence: 1 }),
    ]);
    expect(report.parked).toEqual([
      expect.objectContaining({ queue: 'ledger', reason: 'invalid', transactionId: 'T-huge' }),
    ]);
    expect(report.parked[0].description).not.toMatch(/not kept/);
  });
});
