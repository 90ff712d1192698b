/** A parked copy never goes over the queues' size limit, so a park can never turn into a dead letter. */
import { parkedMessage, type ParkRequest } from '../../src/services/convoy/parking';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../../src/services/message-size';
import { sha256Hex } from '../../src/domain/digest';

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
