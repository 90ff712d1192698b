/**
 * An order's documents stay within Cosmos DB's 2 MB item limit in the bytes the store writes: its
 * UTF-8 JSON, where a control character, a lone surrogate, `"` or `\` takes an escape of 2 to 6
 * bytes and other non-ASCII characters 2 to 4 (docs/messages.md, an entry). An entry past a bound
 * in those bytes is parked `invalid`, naming the field; whatever an accepted entry holds, its
 * order's writes succeed, so nothing dead-letters and no order waits for ever.
 */
import { jsonTextBytes, MAX_ID_BYTES, MAX_TEXT_BYTES, type Entry } from '../../src/domain/entry';
import { FAST, ledger, runToEnd } from '../support/e2e';

/** A ledger message holds about 250 KB: the entries go in batches. */
function batches(prefix: string, entries: readonly Entry[], size: number) {
  const inputs = [];
  for (let start = 0; start < entries.length; start += size) {
    inputs.push(ledger(`${prefix}-${start / size + 1}`, entries.slice(start, start + size)));
  }
  return inputs;
}

const sequencesDown = (from: number, to: number): number[] =>
  Array.from({ length: from - to + 1 }, (_, index) => from - index);

describe('order documents in the bytes the store writes, end to end', () => {
  it('parks invalid, naming each field, entries whose ids and sku are 100 control characters (600 bytes of JSON each); nothing is written, nothing dead-letters', async () => {
    const control = (label: number): string => String.fromCharCode(1 + (label % 30)).repeat(100);
    const orderId = '\u0001'.repeat(100);
    const entry = (sequence: number): Entry =>
      sequence === 1
        ? {
            transactionId: `${control(sequence)}-${sequence}`.slice(-100),
            orderId,
            sequence,
            type: 'OrderCreated',
            data: { customerId: 'C-1', currency: 'EUR' },
          }
        : {
            transactionId: `${control(sequence)}-${sequence}`.slice(-100),
            orderId,
            sequence,
            type: 'TransactionAdded',
            ...(sequence === 2 ? { final: true as const } : {}),
            data: { sku: control(sequence + 7), quantity: 1, unitPrice: 100 },
          };
    const entries = [...sequencesDown(1000, 3), 1, 2].map(entry);

    // Two deliveries, not ten: were such an entry accepted, its dead letter would take seconds, not minutes.
    const { report } = await runToEnd(batches('B', entries, 50), { ...FAST, maxDeliveryCount: 2 });

    expect(report.deadLettered).toEqual([]);
    expect(report.orders).toEqual([]);
    expect(report.parked).toHaveLength(entries.length);
    for (const parked of report.parked) {
      expect(parked).toMatchObject({ queue: 'ledger', reason: 'invalid' });
      expect(parked.description).toMatch(/orderId must be at most 100 bytes .*got 600/);
      expect(parked.description).toMatch(/transactionId must be at most 100 bytes/);
    }
    expect(
      report.parked.filter((parked) => /data\.sku must be at most 100 bytes/.test(parked.description)),
    ).toHaveLength(entries.length - 1);
  }, 300_000);

  it('takes entries at every bound in their most costly bytes (ids and sku of 100 bytes, mostly 6-byte escapes), 1000 down to 3, then 1 and 2: the order is submitted, the entries after its final one parked rejected, nothing dead-letters', async () => {
    /** `label`, then U+0001 (written \u0001, 6 bytes) as often as fits in `bytes`, then ASCII. */
    const costly = (label: string, bytes: number): string => {
      const left = bytes - jsonTextBytes(label);
      return label + '\u0001'.repeat(Math.floor(left / 6)) + 'x'.repeat(left % 6);
    };
    const orderId = costly('O', MAX_ID_BYTES);
    const entry = (sequence: number): Entry => {
      const transactionId = costly(`T${sequence}-`, MAX_ID_BYTES);
      if (sequence === 1) {
        const customerId = costly('C', MAX_TEXT_BYTES);
        return {
          transactionId,
          orderId,
          sequence,
          type: 'OrderCreated',
          data: { customerId, currency: 'EUR' },
        };
      }
      const sku = costly(`S${sequence}-`, MAX_TEXT_BYTES);
      return {
        transactionId,
        orderId,
        sequence,
        type: 'TransactionAdded',
        ...(sequence === 2 ? { final: true as const } : {}),
        data: { sku, quantity: 1, unitPrice: 100 },
      };
    };
    const entries = [...sequencesDown(1000, 3), 1, 2].map(entry);

    const line = entry(2);
    const sku = line.type === 'TransactionAdded' ? line.data.sku : '';
    const { report } = await runToEnd(batches('B', entries, 100), {
      ...FAST,
      maxDeliveryCount: 2,
      catalog: { [sku]: 1 },
      clock: { mode: 'virtual' },
    });

    expect(report.deadLettered).toEqual([]);
    expect(report.orders).toEqual([
      expect.objectContaining({
        orderId,
        status: 'submitted',
        appliedSequence: 1000,
        lines: [{ transactionId: line.transactionId, sku, quantity: 1, unitPrice: 100 }],
        saga: { status: 'completed', reason: null },
      }),
    ]);
    expect(report.parked).toHaveLength(998);
    for (const parked of report.parked)
      expect(parked).toMatchObject({ queue: 'order-transactions', reason: 'rejected' });
  }, 300_000);
});
