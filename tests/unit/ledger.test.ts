/**
 * The serial half of the convoy (src/domain/sequential-convoy.ts, `debatch`, carried out by
 * src/services/convoy/ledger.ts), on recording ports: what one ledger message becomes, message by
 * message, with nothing else between.
 */
import { entryDigest, entryMessageId, sha256Hex, canonicalJson } from '../../src/domain/digest';
import type { Entry } from '../../src/domain/entry';
import { entryMessage } from '../../src/domain/sequential-convoy';
import { forwardLedgerBatch, type LedgerDeps } from '../../src/services/convoy/ledger';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../../src/services/message-size';
import { PARK_PROPERTY, QUEUE } from '../../src/services/queues';
import type { DeliveredMessage, OutgoingMessage, TelemetryProperties } from '../../src/services/ports';
import { added, created } from '../support/e2e';

interface Recorded {
  deps: LedgerDeps;
  sends: Array<{ queue: string; messages: OutgoingMessage[] }>;
  metrics: Array<{ name: string; value: number; properties?: TelemetryProperties }>;
}

function recording(maxMessageBytes?: number): Recorded {
  const sends: Recorded['sends'] = [];
  const metrics: Recorded['metrics'] = [];
  return {
    sends,
    metrics,
    deps: {
      sender: {
        send: async (queue, messages) => {
          sends.push({ queue, messages: [...messages] });
        },
      },
      telemetry: {
        trace: () => {},
        event: () => {},
        metric: (name, value, properties) => metrics.push({ name, value, properties }),
      },
      ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
    },
  };
}

function ledgerMessage(body: unknown, correlationId?: string): DeliveredMessage {
  return {
    messageId: 'L-1',
    sessionId: 'main',
    body,
    correlationId,
    applicationProperties: { source: 'test' },
    deliveryCount: 1,
    sequenceNumber: 1,
  };
}

const parkId = (reason: string, raw: unknown): string =>
  `${reason}:${sha256Hex(canonicalJson(raw)).slice(0, 32)}`;

describe('entryMessage', () => {
  it('is the entry in its order session, under the id of its transaction and digest', () => {
    const entry = added('O-1', 'T-2', 2);
    expect(entryMessage(entry, 'B-1', 'corr')).toEqual({
      messageId: entryMessageId('T-2', entryDigest(entry)),
      sessionId: 'O-1',
      body: entry,
      correlationId: 'corr',
      subject: 'TransactionAdded',
      applicationProperties: { transactionId: 'T-2', sequence: 2, final: false, batchId: 'B-1' },
    });
    expect(entryMessage(created('O-1', 'T-1', 1, true), 'B-1', 'corr').applicationProperties?.final).toBe(
      true,
    );
  });
});

describe('forwardLedgerBatch', () => {
  it('forwards every valid entry in one send, in batch order, correlated by the ledger message id', async () => {
    const r = recording();
    const entries: Entry[] = [created('O-1', 'T-1'), created('O-2', 'T-9'), added('O-1', 'T-2', 2)];
    const outcome = await forwardLedgerBatch(r.deps, ledgerMessage({ batchId: 'B-1', entries }));
    expect(outcome).toEqual({ batchId: 'B-1', forwarded: 3, parked: 0 });
    expect(r.sends).toEqual([
      {
        queue: QUEUE.orderTransactions,
        messages: entries.map((entry) => entryMessage(entry, 'B-1', 'L-1')),
      },
    ]);
    expect(r.metrics).toEqual([{ name: 'ledger.entriesForwarded', value: 3, properties: undefined }]);
  });

  it('keeps the correlationId the ledger message came with', async () => {
    const r = recording();
    await forwardLedgerBatch(
      r.deps,
      ledgerMessage({ batchId: 'B-1', entries: [created('O-1', 'T-1')] }, 'C-7'),
    );
    expect(r.sends[0].messages[0].correlationId).toBe('C-7');
  });

  it('parks a message that is no batch whole, with what it came with, and forwards nothing', async () => {
    const r = recording();
    const body = { entries: [created('O-1', 'T-1')] };
    const outcome = await forwardLedgerBatch(r.deps, ledgerMessage(body, 'C-7'));
    expect(outcome).toEqual({ batchId: 'L-1', forwarded: 0, parked: 1 });
    expect(r.sends).toHaveLength(1);
    expect(r.sends[0].queue).toBe(QUEUE.parked);
    expect(r.sends[0].messages).toEqual([
      {
        messageId: 'L-1',
        body,
        correlationId: 'C-7',
        subject: 'invalid',
        applicationProperties: {
          source: 'test',
          [PARK_PROPERTY.reason]: 'invalid',
          [PARK_PROPERTY.description]: expect.stringContaining('batchId'),
          [PARK_PROPERTY.queue]: QUEUE.ledger,
          [PARK_PROPERTY.sessionId]: 'main',
        },
      },
    ]);
    expect(r.metrics.map((m) => m.name)).toEqual(['messages.parked']);
  });

  it('parks an invalid entry under an id from its content, its transactionId kept when it is a string, after the forwards', async () => {
    const r = recording();
    const bad = { transactionId: 'T-3', orderId: 'O-1', sequence: 0, type: 'TransactionAdded', data: {} };
    const noId = { transactionId: 7, orderId: 'O-1' };
    // undefined: a body given as an object (no JSON text) can hold it.
    const entries: unknown[] = [created('O-1', 'T-1'), bad, noId, null, 'text', undefined];
    const outcome = await forwardLedgerBatch(r.deps, ledgerMessage({ batchId: 'B-1', entries }));
    expect(outcome).toEqual({ batchId: 'B-1', forwarded: 1, parked: 5 });
    expect(r.sends.map((s) => s.queue)).toEqual([QUEUE.orderTransactions, QUEUE.parked]);
    const parked = r.sends[1].messages;
    expect(parked.map((m) => m.messageId)).toEqual([
      parkId('invalid', bad),
      parkId('invalid', noId),
      parkId('invalid', null),
      parkId('invalid', 'text'),
      `invalid:${sha256Hex('undefined').slice(0, 32)}`,
    ]);
    expect(parked.map((m) => m.body)).toStrictEqual([bad, noId, null, 'text', undefined]);
    expect(
      parked.map((m) => Object.hasOwn(m.applicationProperties ?? {}, PARK_PROPERTY.transactionId)),
    ).toEqual([true, false, false, false, false]);
    expect(parked[0].applicationProperties?.[PARK_PROPERTY.transactionId]).toBe('T-3');
    expect(parked[0]).toMatchObject({
      correlationId: 'L-1',
      subject: 'invalid',
      applicationProperties: {
        batchId: 'B-1',
        entryIndex: 1,
        [PARK_PROPERTY.reason]: 'invalid',
        [PARK_PROPERTY.queue]: QUEUE.ledger,
        [PARK_PROPERTY.sessionId]: 'main',
      },
    });
    expect(parked[0].applicationProperties?.[PARK_PROPERTY.description]).toMatch(
      /^entries\[1\]\.sequence .*; /,
    );
    expect(parked.map((m) => m.applicationProperties?.entryIndex)).toEqual([1, 2, 3, 4, 5]);
    expect(r.metrics.at(-1)).toEqual({ name: 'ledger.entriesForwarded', value: 1, properties: undefined });
  });

  it('sends no forward when no entry is valid', async () => {
    const r = recording();
    const outcome = await forwardLedgerBatch(r.deps, ledgerMessage({ batchId: 'B-1', entries: [{}] }));
    expect(outcome).toEqual({ batchId: 'B-1', forwarded: 0, parked: 1 });
    expect(r.sends.map((s) => s.queue)).toEqual([QUEUE.parked]);
    expect(r.metrics.at(-1)).toEqual({ name: 'ledger.entriesForwarded', value: 0, properties: undefined });
  });

  it('sends nothing for an empty batch', async () => {
    const r = recording();
    expect(await forwardLedgerBatch(r.deps, ledgerMessage({ batchId: 'B-1', entries: [] }))).toEqual({
      batchId: 'B-1',
      forwarded: 0,
      parked: 0,
    });
    expect(r.sends).toEqual([]);
  });

  it('parks alone an entry whose message would be over the limit, with what identifies it; one at the limit goes', async () => {
    const small = added('O-1', 'T-2', 2);
    const big = {
      ...added('O-1', 'T-3', 3),
      data: { sku: 'x'.repeat(100), quantity: 1, unitPrice: 100 },
    } as Entry;
    const limit = estimateMessageBytes(entryMessage(small, 'B-1', 'L-1'));
    const bigBytes = estimateMessageBytes(entryMessage(big, 'B-1', 'L-1'));
    expect(bigBytes).toBeGreaterThan(limit);
    const r = recording(limit);
    const outcome = await forwardLedgerBatch(
      r.deps,
      ledgerMessage({ batchId: 'B-1', entries: [big, small] }),
    );
    expect(outcome).toEqual({ batchId: 'B-1', forwarded: 1, parked: 1 });
    expect(r.sends[0]).toEqual({
      queue: QUEUE.orderTransactions,
      messages: [entryMessage(small, 'B-1', 'L-1')],
    });
    expect(r.sends[1].queue).toBe(QUEUE.parked);
    // The park's own copy is over so small a limit too, so the parked queue gets what identifies
    // the ledger's request body (its size and SHA-256), which pins that body.
    const requestBody = JSON.stringify({
      transactionId: 'T-3',
      orderId: 'O-1',
      sequence: 3,
      type: 'TransactionAdded',
      bytes: bigBytes,
      omitted: 'the entry, over the size limit',
    });
    const description = `entries[0] would travel in a message of about ${bigBytes} bytes, over the queues' ${limit}-byte limit; its body is not kept`;
    expect(r.sends[1].messages).toEqual([
      {
        messageId: parkId('too-large', big),
        body: {
          omitted: 'the parked body, over the size limit',
          bytes: Buffer.byteLength(requestBody),
          sha256: sha256Hex(requestBody),
        },
        correlationId: 'L-1',
        subject: 'too-large',
        applicationProperties: {
          batchId: 'B-1',
          entryIndex: 0,
          [PARK_PROPERTY.reason]: 'too-large',
          [PARK_PROPERTY.description]: expect.stringContaining(`${description}; its body is not kept: `),
          [PARK_PROPERTY.queue]: QUEUE.ledger,
          [PARK_PROPERTY.sessionId]: 'main',
          [PARK_PROPERTY.transactionId]: 'T-3',
        },
      },
    ]);
  });

  it("takes Standard's limit when none is given", async () => {
    const r = recording();
    const near = DEFAULT_MAX_MESSAGE_BYTES;
    const entry = created('O-1', 'T-1');
    expect(estimateMessageBytes(entryMessage(entry, 'B-1', 'L-1'))).toBeLessThan(near);
    await forwardLedgerBatch(r.deps, ledgerMessage({ batchId: 'B-1', entries: [entry] }));
    expect(r.sends.map((s) => s.queue)).toEqual([QUEUE.orderTransactions]);
    // One byte of limit less than the message: parked, so the default is the limit, not some other.
    const tight = recording(estimateMessageBytes(entryMessage(entry, 'B-1', 'L-1')) - 1);
    await forwardLedgerBatch(tight.deps, ledgerMessage({ batchId: 'B-1', entries: [entry] }));
    expect(tight.sends.map((s) => s.queue)).toEqual([QUEUE.parked]);
  });
});
