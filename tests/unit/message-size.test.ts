/** The sender's estimate of a message's size and the tier limits (src/services/message-size.ts). */
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_SERVICE_BUS_TIER,
  MAX_MESSAGE_BYTES_BY_TIER,
  MAX_MESSAGE_BYTES_RANGE,
  estimateMessageBytes,
  parseMaxMessageBytes,
} from '../../src/services/message-size';
import { PARK_PROPERTY, QUEUE, QUEUE_FLAGS } from '../../src/services/queues';

describe('the message size limits', () => {
  it('are 256 KB on Standard and 1 MB on Premium, Standard being the default', () => {
    expect(MAX_MESSAGE_BYTES_BY_TIER).toEqual({ Standard: 256 * 1024, Premium: 1024 * 1024 });
    expect(DEFAULT_SERVICE_BUS_TIER).toBe('Standard');
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(256 * 1024);
  });
});

describe('estimateMessageBytes', () => {
  it('is 100 bytes of overhead plus the body JSON, the ids and the properties JSON, in UTF-8 bytes', () => {
    expect(estimateMessageBytes({ messageId: 'm', body: 'x' })).toBe(100 + 3 + 1 + 0 + 2);
    expect(
      estimateMessageBytes({
        messageId: 'id-é',
        sessionId: 'sé',
        body: { a: 'ü' },
        applicationProperties: { k: 1 },
      }),
    ).toBe(
      100 +
        Buffer.byteLength('{"a":"ü"}') +
        Buffer.byteLength('id-é') +
        Buffer.byteLength('sé') +
        Buffer.byteLength('{"k":1}'),
    );
  });

  it('counts an undefined body as nothing', () => {
    expect(estimateMessageBytes({ messageId: '', body: undefined })).toBe(100 + 2);
  });

  it('grows byte for byte with each part', () => {
    const base = { messageId: 'm', sessionId: 's', body: 'b', applicationProperties: { p: 'v' } };
    const size = estimateMessageBytes(base);
    expect(estimateMessageBytes({ ...base, messageId: 'mm' })).toBe(size + 1);
    expect(estimateMessageBytes({ ...base, sessionId: 'ss' })).toBe(size + 1);
    expect(estimateMessageBytes({ ...base, body: 'bb' })).toBe(size + 1);
    expect(estimateMessageBytes({ ...base, applicationProperties: { p: 'vv' } })).toBe(size + 1);
  });
});

describe('the queues', () => {
  it('are named as docs/messages.md names them, with their flags', () => {
    expect(QUEUE).toEqual({ ledger: 'ledger', orderTransactions: 'order-transactions', parked: 'parked' });
    expect(QUEUE_FLAGS).toEqual({
      ledger: { requiresSession: true, requiresDuplicateDetection: true },
      'order-transactions': { requiresSession: true, requiresDuplicateDetection: true },
      parked: { requiresSession: false, requiresDuplicateDetection: true },
    });
    expect(PARK_PROPERTY).toEqual({
      reason: 'parkReason',
      description: 'parkDescription',
      queue: 'parkedFromQueue',
      sessionId: 'parkedFromSessionId',
      transactionId: 'transactionId',
    });
  });
});

describe('parseMaxMessageBytes', () => {
  it('takes a whole number of bytes from Standard 256 KB to Premium 100 MB, both ends included', () => {
    expect(MAX_MESSAGE_BYTES_RANGE).toEqual({ min: 262_144, max: 104_857_600 });
    expect(parseMaxMessageBytes('262144')).toEqual({ ok: true, value: 262_144 });
    expect(parseMaxMessageBytes('1048576')).toEqual({ ok: true, value: 1_048_576 });
    expect(parseMaxMessageBytes('104857600')).toEqual({ ok: true, value: 104_857_600 });
    expect(parseMaxMessageBytes(' 300000 ')).toEqual({ ok: true, value: 300_000 });
  });

  it('names the range and the text it got for anything else', () => {
    const problem = (raw: string) =>
      `must be a whole number of bytes from 262144 (Standard) to 104857600 (Premium's largest), got ${JSON.stringify(raw)}`;
    for (const raw of ['', '   ', '262143', '104857601', '300000.5', 'abc', '1e400', '-262144']) {
      expect(parseMaxMessageBytes(raw)).toEqual({ ok: false, problem: problem(raw) });
    }
  });
});
