/** A parked copy never goes over the queues' size limit, so a park can never turn into a dead letter. */
import { parkedMessage, type ParkRequest } from '../../src/services/convoy/parking';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../../src/services/message-size';
import { sha256Hex } from '../../src/domain/digest';
import { createEmbeddedStore } from '../../local/store/document-store';
import { createOrderCache } from '../../src/services/convoy/order-cache';
import { applyEntry } from '../../src/services/idempotent-consumer';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import type { DeliveredMessage, OutgoingMessage } from '../../src/services/ports';

function request(body: unknown): ParkRequest {
  return {
    fromQueue: 'order-transactions',
    messageId: 'T-1:0123456789abcdef',
    sessionId: 'O-1',
    body,
    applicationProperties: { transactionId: 'T-1', sequence: 1, final: false, batchId: 'B-1' },
    transactionId: 'T-1',
    reason: 'invalid',
    description: 'data.sku must be at most 100 UTF-16 code units, got 261000',
  };
}

describe('parkedMessage', () => {
  it('keeps a body that fits, as it came', () => {
    const body = { transactionId: 'T-1', data: { sku: 'x'.repeat(1000) } };
    expect(parkedMessage(request(body)).body).toBe(body);
  });

  it('keeps the size and SHA-256 of a body whose parked copy would be over the limit, and says so', () => {
    const body = { transactionId: 'T-1', data: { sku: 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES - 300) } };
    const original = { messageId: 'T-1:0123456789abcdef', sessionId: 'O-1', body };
    expect(estimateMessageBytes(original)).toBeLessThanOrEqual(DEFAULT_MAX_MESSAGE_BYTES);
    const parked = parkedMessage(request(body));
    expect(estimateMessageBytes(parked)).toBeLessThanOrEqual(DEFAULT_MAX_MESSAGE_BYTES);
    expect(parked.body).toEqual({
      omitted: 'the parked body, over the size limit',
      bytes: JSON.stringify(body).length,
      sha256: sha256Hex(JSON.stringify(body)),
    });
    expect(parked.applicationProperties?.parkDescription).toMatch(
      /^data\.sku must be .*; its body is not kept/,
    );
    expect(parked.messageId).toBe('T-1:0123456789abcdef');
  });

  it('takes the limit of the tier it is given', () => {
    const body = { data: 'x'.repeat(2000) };
    expect(parkedMessage(request(body), 1000).body).toMatchObject({ omitted: expect.any(String) });
    expect(parkedMessage(request(body), 1_048_576).body).toBe(body);
  });
});

describe('the consumer parks by the tier it is given', () => {
  // SERVICE_BUS_MAX_MESSAGE_BYTES on Premium is 1 MB: an invalid entry of 300 KB, which Premium
  // carried, keeps its body when parked; under Standard's 256 KB only its size and hash are kept.
  const invalid = (): DeliveredMessage => ({
    messageId: 'T-BIG:0123456789abcdef',
    sessionId: 'O-BIG',
    body: {
      transactionId: 'T-BIG',
      orderId: 'O-BIG',
      sequence: 1,
      type: 'OrderCreated',
      junk: 'x'.repeat(300_000),
    },
    applicationProperties: {},
    deliveryCount: 1,
    sequenceNumber: 1,
    correlationId: undefined,
  });
  const parkedBody = async (maxMessageBytes: number | undefined): Promise<unknown> => {
    const sent: OutgoingMessage[] = [];
    const ignore = (): void => {};
    await applyEntry(
      {
        orders: createEmbeddedStore().container(ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH),
        sender: { send: async (_queue, messages) => void sent.push(...messages) },
        fulfillment: { start: async () => undefined },
        telemetry: { trace: ignore, event: ignore, metric: ignore },
        cache: createOrderCache(),
        maxMessageBytes,
      },
      invalid(),
    );
    expect(sent).toHaveLength(1);
    return sent[0].body;
  };

  it('keeps the body on Premium', async () => {
    expect(await parkedBody(1_048_576)).toMatchObject({ transactionId: 'T-BIG', junk: expect.any(String) });
  });

  it("keeps only the size and hash under Standard's limit, the default", async () => {
    expect(await parkedBody(undefined)).toMatchObject({ omitted: expect.any(String) });
  });
});
