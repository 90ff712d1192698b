/** Parking a message (src/services/convoy/parking.ts), on recording ports. */
import { canonicalJson, sha256Hex } from '../../src/domain/digest';
import { park, parkedMessage, parkIdFor, type ParkRequest } from '../../src/services/convoy/parking';
import { DEFAULT_MAX_MESSAGE_BYTES, estimateMessageBytes } from '../../src/services/message-size';
import { PARK_PROPERTY, QUEUE } from '../../src/services/queues';
import type { OutgoingMessage, TelemetryProperties } from '../../src/services/ports';

function request(overrides: Partial<ParkRequest> = {}): ParkRequest {
  return {
    fromQueue: QUEUE.orderTransactions,
    messageId: 'T-1:0123456789abcdef',
    sessionId: 'O-1',
    body: { transactionId: 'T-1' },
    correlationId: 'corr',
    applicationProperties: { transactionId: 'T-1', sequence: 1, final: false, batchId: 'B-1' },
    transactionId: 'T-1',
    reason: 'invalid',
    description: 'data.sku is missing',
    ...overrides,
  };
}

function recording(maxMessageBytes?: number) {
  const sends: Array<{ queue: string; messages: OutgoingMessage[] }> = [];
  const events: Array<{ name: string; properties?: TelemetryProperties }> = [];
  const metrics: Array<{ name: string; value: number; properties?: TelemetryProperties }> = [];
  return {
    sends,
    events,
    metrics,
    deps: {
      sender: {
        send: async (queue: string, messages: readonly OutgoingMessage[]) => {
          sends.push({ queue, messages: [...messages] });
        },
      },
      telemetry: {
        trace: () => {},
        event: (name: string, properties?: TelemetryProperties) => events.push({ name, properties }),
        metric: (name: string, value: number, properties?: TelemetryProperties) =>
          metrics.push({ name, value, properties }),
      },
      ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
    },
  };
}

describe('parkIdFor', () => {
  it('is the reason and 32 hex digits of the SHA-256 of the canonical content', () => {
    const content = { b: 1, a: [2, 'x'] };
    expect(parkIdFor('invalid', content)).toBe(`invalid:${sha256Hex(canonicalJson(content)).slice(0, 32)}`);
    expect(parkIdFor('too-large', { a: [2, 'x'], b: 1 })).toBe(
      `too-large:${sha256Hex(canonicalJson(content)).slice(0, 32)}`,
    );
    expect(parkIdFor('invalid', undefined)).toBe(`invalid:${sha256Hex('undefined').slice(0, 32)}`);
  });
});

describe('parkedMessage', () => {
  it("is the original with the park's properties, where it came from included", () => {
    expect(parkedMessage(request())).toEqual({
      messageId: 'T-1:0123456789abcdef',
      body: { transactionId: 'T-1' },
      correlationId: 'corr',
      subject: 'invalid',
      applicationProperties: {
        transactionId: 'T-1',
        sequence: 1,
        final: false,
        batchId: 'B-1',
        [PARK_PROPERTY.reason]: 'invalid',
        [PARK_PROPERTY.description]: 'data.sku is missing',
        [PARK_PROPERTY.queue]: QUEUE.orderTransactions,
        [PARK_PROPERTY.sessionId]: 'O-1',
      },
    });
  });

  it('leaves out the session and the transaction it has not', () => {
    const parked = parkedMessage(
      request({ sessionId: undefined, transactionId: null, applicationProperties: undefined }),
    );
    expect(parked.applicationProperties).toEqual({
      [PARK_PROPERTY.reason]: 'invalid',
      [PARK_PROPERTY.description]: 'data.sku is missing',
      [PARK_PROPERTY.queue]: QUEUE.orderTransactions,
    });
  });

  it('keeps the body of a copy exactly at the limit, not of one a byte over', () => {
    const copy = parkedMessage(request());
    const bytes = estimateMessageBytes(copy);
    expect(parkedMessage(request(), bytes)).toEqual(copy);
    const over = parkedMessage(request(), bytes - 1);
    const bodyText = JSON.stringify(request().body);
    expect(over.body).toEqual({
      omitted: 'the parked body, over the size limit',
      bytes: Buffer.byteLength(bodyText, 'utf8'),
      sha256: sha256Hex(bodyText),
    });
    expect(over.applicationProperties?.[PARK_PROPERTY.description]).toBe(
      `data.sku is missing; its body is not kept: the parked copy would be about ${bytes} bytes, over the ${bytes - 1}-byte message limit`,
    );
  });

  it('counts the bytes of a body in UTF-8, and takes an undefined body as empty text', () => {
    const over = parkedMessage(request({ body: 'é' }), 10);
    expect(over.body).toMatchObject({ bytes: Buffer.byteLength('"é"', 'utf8'), sha256: sha256Hex('"é"') });
    expect(Buffer.byteLength('"é"', 'utf8')).toBe(4);
    expect(parkedMessage(request({ body: undefined }), 10).body).toMatchObject({
      bytes: 0,
      sha256: sha256Hex(''),
    });
  });

  it("takes Standard's limit by default", () => {
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(262_144);
    const body = { data: 'x'.repeat(DEFAULT_MAX_MESSAGE_BYTES - 1000) };
    expect(estimateMessageBytes(parkedMessage(request({ body }), 1_048_576))).toBeLessThan(
      DEFAULT_MAX_MESSAGE_BYTES,
    );
    expect(parkedMessage(request({ body })).body).toBe(body);
  });
});

describe('park', () => {
  it('sends nothing and records nothing for no request', async () => {
    const r = recording();
    await park(r.deps, []);
    expect(r.sends).toEqual([]);
    expect(r.events).toEqual([]);
    expect(r.metrics).toEqual([]);
  });

  it('sends every parked copy in one send to the parked queue, by the limit it is given', async () => {
    const r = recording(300);
    const requests = [request(), request({ messageId: 'M-2', transactionId: 'T-2' })];
    await park(r.deps, requests);
    expect(r.sends).toEqual([
      { queue: QUEUE.parked, messages: requests.map((one) => parkedMessage(one, 300)) },
    ]);
    expect(r.sends[0].messages[0].body).toMatchObject({ omitted: expect.any(String) });
  });

  it('records a metric by reason and queue and an event with the ids, per park', async () => {
    const r = recording();
    await park(r.deps, [request(), request({ messageId: 'M-2', transactionId: null, reason: 'rejected' })]);
    expect(r.metrics).toEqual([
      {
        name: 'messages.parked',
        value: 1,
        properties: { reason: 'invalid', queue: QUEUE.orderTransactions },
      },
      {
        name: 'messages.parked',
        value: 1,
        properties: { reason: 'rejected', queue: QUEUE.orderTransactions },
      },
    ]);
    expect(r.events).toEqual([
      {
        name: 'MessageParked',
        properties: {
          reason: 'invalid',
          queue: QUEUE.orderTransactions,
          messageId: 'T-1:0123456789abcdef',
          sessionId: 'O-1',
          transactionId: 'T-1',
          correlationId: 'corr',
          description: 'data.sku is missing',
        },
      },
      {
        name: 'MessageParked',
        properties: {
          reason: 'rejected',
          queue: QUEUE.orderTransactions,
          messageId: 'M-2',
          sessionId: 'O-1',
          transactionId: null,
          correlationId: 'corr',
          description: 'data.sku is missing',
        },
      },
    ]);
  });

  it('raises an alert for a digest mismatch', async () => {
    const r = recording();
    await park(r.deps, [request({ reason: 'digest-mismatch', description: 'same id, other content' })]);
    expect(r.events.map((e) => e.name)).toEqual(['MessageParked', 'Alert.DigestMismatch']);
    expect(r.events[1].properties).toEqual({
      messageId: 'T-1:0123456789abcdef',
      sessionId: 'O-1',
      transactionId: 'T-1',
      description: 'same id, other content',
    });
  });
});
