/** What a replay sends, built once for every implementation (src/services/operations/held-messages.ts). */
import {
  detailOf,
  parkedLedgerEntry,
  parkInfoOf,
  replayMessageId,
  replayTargetOf,
  summaryOf,
  withoutParkProperties,
} from '../../src/services/operations/held-messages';
import type {
  DeadLetteredMessage,
  ParkedMessage,
} from '../../src/services/operations/message-operations-port';
import { parkedAsRead } from '../support/parked';

const entryBody = { transactionId: 'T-1', orderId: 'O-1', sequence: 2, type: 'OrderDeleted', data: {} };

describe('replayTargetOf a parked message', () => {
  it('goes back to its queue and session with its body, id, correlation and own properties', () => {
    const parked = parkedAsRead({
      fromQueue: 'order-transactions',
      messageId: 'T-1:0123456789abcdef',
      sessionId: 'O-2',
      body: entryBody,
      correlationId: 'corr-1',
      applicationProperties: { transactionId: 'T-1', sequence: 2, final: false, batchId: 'B-1' },
      transactionId: 'T-1',
      reason: 'misrouted',
      description: 'orderId O-1 arrived in session O-2',
    });
    expect(parked.park).toEqual({
      reason: 'misrouted',
      description: 'orderId O-1 arrived in session O-2',
      fromQueue: 'order-transactions',
      fromSessionId: 'O-2',
      transactionId: 'T-1',
    });
    expect(replayTargetOf(parked)).toEqual({
      ok: true,
      queue: 'order-transactions',
      message: {
        messageId: 'replay-p7:T-1:0123456789abcdef',
        sessionId: 'O-2',
        body: entryBody,
        correlationId: 'corr-1',
        applicationProperties: { transactionId: 'T-1', sequence: 2, final: false, batchId: 'B-1' },
      },
    });
  });

  it('sends a ledger entry parked on its own as the one-entry batch it was cut from', () => {
    const parked = parkedAsRead({
      fromQueue: 'ledger',
      messageId: 'B-9#1',
      sessionId: 'main',
      body: { transactionId: 'T-x' },
      correlationId: 'B-9',
      applicationProperties: { batchId: 'B-9', entryIndex: 1 },
      transactionId: 'T-x',
      reason: 'invalid',
      description: 'entries[1].orderId must be a non-empty string',
    });
    const target = replayTargetOf(parked);
    expect(target).toMatchObject({
      ok: true,
      queue: 'ledger',
      message: {
        messageId: 'B-9#1',
        sessionId: 'main',
        body: { batchId: 'B-9', entries: [{ transactionId: 'T-x' }] },
        applicationProperties: { batchId: 'B-9', entryIndex: 1, transactionId: 'T-x' },
      },
    });
  });

  it('sends a ledger batch parked whole as it was', () => {
    const parked = parkedAsRead({
      fromQueue: 'ledger',
      messageId: 'B-3',
      sessionId: 'main',
      body: 'not json',
      transactionId: null,
      reason: 'invalid',
      description: 'body is not valid JSON',
    });
    // Exactly: no correlationId or subject the held message has not.
    expect(replayTargetOf(parked)).toEqual({
      ok: true,
      queue: 'ledger',
      message: { messageId: 'B-3', sessionId: 'main', body: 'not json', applicationProperties: {} },
    });
  });

  it('cannot replay a message that records no origin, or no session for a session queue', () => {
    const base = parkedAsRead({
      fromQueue: 'order-transactions',
      messageId: 'm',
      sessionId: undefined,
      body: {},
      transactionId: null,
      reason: 'invalid',
      description: '',
    });
    expect(replayTargetOf(base)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('parkedFromSessionId'),
    });
    const nowhere: ParkedMessage = { ...base, park: { ...base.park, fromQueue: null } };
    expect(replayTargetOf(nowhere)).toMatchObject({ ok: false, reason: expect.stringContaining('no queue') });
    const itself: ParkedMessage = { ...base, park: { ...base.park, fromQueue: 'parked' } };
    expect(replayTargetOf(itself).ok).toBe(false);
  });
});

describe('replayTargetOf a dead-lettered message', () => {
  const dead: DeadLetteredMessage = {
    kind: 'dead-lettered',
    queue: 'order-transactions',
    messageId: 'T-5:aa',
    sessionId: 'O-5',
    body: entryBody,
    correlationId: null,
    subject: 'OrderDeleted',
    applicationProperties: { transactionId: 'T-5', sequence: 2 },
    sequenceNumber: '12',
    enqueuedTimeUtc: 0,
    deliveryCount: 10,
    deadLetterReason: 'MaxDeliveryCountExceeded',
    deadLetterDescription: 'too many',
  };

  it('goes back into the queue it died in, same session, subject kept, under a fresh id', () => {
    expect(replayTargetOf(dead)).toEqual({
      ok: true,
      queue: 'order-transactions',
      message: {
        messageId: 'replay-d12:T-5:aa',
        sessionId: 'O-5',
        body: entryBody,
        subject: 'OrderDeleted',
        applicationProperties: { transactionId: 'T-5', sequence: 2 },
      },
    });
    expect(replayTargetOf({ ...dead, sessionId: null }).ok).toBe(false);
  });

  it('summarises without the body, times as ISO text', () => {
    expect(summaryOf(dead)).toEqual({
      messageId: 'T-5:aa',
      sessionId: 'O-5',
      sequenceNumber: '12',
      enqueuedTimeUtc: '1970-01-01T00:00:00.000Z',
      deliveryCount: 10,
      queue: 'order-transactions',
      deadLetterReason: 'MaxDeliveryCountExceeded',
      deadLetterDescription: 'too many',
    });
  });
});

describe('withoutParkProperties', () => {
  it('drops exactly the properties the park added, keeping transactionId', () => {
    expect(
      withoutParkProperties({
        parkReason: 'rejected',
        parkDescription: 'x',
        parkedFromQueue: 'order-transactions',
        parkedFromSessionId: 'O-1',
        transactionId: 'T-1',
        sequence: 3,
        final: true,
      }),
    ).toEqual({ transactionId: 'T-1', sequence: 3, final: true });
  });
});

describe('parkInfoOf', () => {
  it('reads each park property as text, and says what is missing', () => {
    expect(
      parkInfoOf({
        parkReason: 'too-large',
        parkDescription: 'over 262144 bytes',
        parkedFromQueue: 'ledger',
        parkedFromSessionId: 'main',
        transactionId: 42,
      }),
    ).toEqual({
      reason: 'too-large',
      description: 'over 262144 bytes',
      fromQueue: 'ledger',
      fromSessionId: 'main',
      transactionId: '42',
    });
    expect(parkInfoOf({ parkReason: false })).toEqual({
      reason: 'false',
      description: '',
      fromQueue: null,
      fromSessionId: null,
      transactionId: null,
    });
    expect(parkInfoOf({}).reason).toBe('unknown');
  });
});

describe('parkedLedgerEntry', () => {
  const entry = parkedAsRead({
    fromQueue: 'ledger',
    messageId: 'B-9#1',
    sessionId: 'main',
    body: {},
    applicationProperties: { batchId: 'B-9', entryIndex: 1 },
    transactionId: null,
    reason: 'invalid',
    description: '',
  });

  it('is a message the ledger parked with its batchId and its index in the batch', () => {
    expect(parkedLedgerEntry(entry)).toEqual({ batchId: 'B-9', entryIndex: 1 });
    expect(
      parkedLedgerEntry({ ...entry, park: { ...entry.park, fromQueue: 'order-transactions' } }),
    ).toBeNull();
    const properties = entry.applicationProperties;
    expect(parkedLedgerEntry({ ...entry, applicationProperties: { ...properties, batchId: 9 } })).toBeNull();
    expect(
      parkedLedgerEntry({ ...entry, applicationProperties: { ...properties, entryIndex: '1' } }),
    ).toBeNull();
  });
});

describe('replayMessageId', () => {
  it('stays within the 128 characters of a Service Bus messageId', () => {
    const long = parkedAsRead({
      fromQueue: 'order-transactions',
      messageId: 'x'.repeat(128),
      sessionId: 'O-1',
      body: {},
      transactionId: null,
      reason: 'rejected',
      description: '',
    });
    expect(replayMessageId(long)).toBe(`replay-p7:${'x'.repeat(118)}`);
  });
});

describe('replayTargetOf, what it leaves out', () => {
  it('names the queue a parked message records when it is none to replay into', () => {
    const base = parkedAsRead({
      fromQueue: 'orders',
      messageId: 'm',
      sessionId: 'O-1',
      body: {},
      transactionId: null,
      reason: 'invalid',
      description: '',
    });
    expect(replayTargetOf(base)).toEqual({
      ok: false,
      reason: 'parked message m records no queue it came from (parkedFromQueue is orders)',
    });
    expect(replayTargetOf({ ...base, park: { ...base.park, fromQueue: null } })).toEqual({
      ok: false,
      reason: 'parked message m records no queue it came from (parkedFromQueue is missing)',
    });
    expect(
      replayTargetOf({ ...base, park: { ...base.park, fromQueue: 'ledger', fromSessionId: null } }),
    ).toEqual({
      ok: false,
      reason: 'parked message m came from session queue ledger but records no parkedFromSessionId',
    });
  });

  it('sends no correlationId, subject or sessionId that the held message has not', () => {
    const restored: DeadLetteredMessage = {
      kind: 'dead-lettered',
      queue: 'parked',
      messageId: 'P-1',
      sessionId: null,
      body: { a: 1 },
      correlationId: null,
      subject: null,
      applicationProperties: { parkReason: 'rejected' },
      sequenceNumber: '3',
      enqueuedTimeUtc: 0,
      deliveryCount: 10,
      deadLetterReason: null,
      deadLetterDescription: null,
    };
    expect(replayTargetOf(restored)).toEqual({
      ok: true,
      queue: 'parked',
      message: { messageId: 'P-1', body: { a: 1 }, applicationProperties: { parkReason: 'rejected' } },
    });
    expect(replayTargetOf({ ...restored, queue: 'ledger', sessionId: 'main', correlationId: 'c' })).toEqual({
      ok: true,
      queue: 'ledger',
      message: {
        messageId: 'P-1',
        sessionId: 'main',
        body: { a: 1 },
        correlationId: 'c',
        applicationProperties: { parkReason: 'rejected' },
      },
    });
    expect(replayTargetOf({ ...restored, queue: 'ledger' })).toEqual({
      ok: false,
      reason: 'dead-lettered message P-1 of session queue ledger has no sessionId',
    });
  });
});

describe('summaryOf and detailOf a parked message', () => {
  it('summarise with the park record, and show the rest in full', () => {
    const message = parkedAsRead({
      fromQueue: 'order-transactions',
      messageId: 'T-1:00',
      sessionId: 'O-1',
      body: entryBody,
      correlationId: 'corr-1',
      transactionId: 'T-1',
      reason: 'rejected',
      description: 'no order',
    });
    const summary = {
      messageId: 'T-1:00',
      sessionId: null,
      sequenceNumber: '7',
      enqueuedTimeUtc: '2023-11-14T22:13:20.000Z',
      deliveryCount: 0,
      park: message.park,
    };
    expect(summaryOf(message)).toEqual(summary);
    expect(detailOf(message)).toEqual({
      ...summary,
      correlationId: 'corr-1',
      subject: message.subject,
      applicationProperties: message.applicationProperties,
      body: entryBody,
    });
    expect(message.subject).not.toBeNull();
  });
});
