/**
 * The payloads the embedded host sends the worker, held against the sources they copy:
 * azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Triggers/ServiceBusTriggerBindingStrategy.cs`
 * (the binding data keys and CLR types), azure-functions-host
 * `src/WebJobs.Script.Grpc/MessageExtensions/GrpcMessageConversionExtensions.cs` (`ToRpc`: string →
 * `string`, null → nothing set, int/long/DateTime/dictionary → Newtonsoft JSON), and what the Node
 * library makes of them (`fromRpcTriggerMetadata.ts`, `fromRpcTypedData.ts`), run for real.
 */
import type { InvocationContext } from '@azure/functions';
import type { ReceivedMessage } from '../../local/broker/broker';
import { serviceBusBindingData, serviceBusTriggerMetadata } from '../../local/worker/service-bus';
import { registerAndCapture } from '../../local/worker/register';
import { invokeForMessage, queueFunctionsOf } from '../../local/host/queue-function';
import { asTheWorkerConverts } from '../../src/functions/delivered-message';

const ENQUEUED = Date.UTC(2024, 0, 2, 3, 4, 5, 678);

function received(overrides: Partial<ReceivedMessage> = {}): ReceivedMessage {
  return {
    queue: 'orders',
    messageId: 'T-1:abc',
    sessionId: 'O-17',
    body: { orderId: 'O-17' },
    correlationId: undefined,
    subject: undefined,
    contentType: 'application/json',
    applicationProperties: { Sequence: 2, final: true, batchId: 'B-1' },
    sequenceNumber: 41,
    enqueuedTimeUtc: ENQUEUED,
    deliveryCount: 3,
    lockToken: '5b0f9a1e-0000-4000-8000-000000000001',
    lockedUntil: ENQUEUED + 1000,
    ...overrides,
  };
}

/** Delivers one message to a function through the library's invocation model and returns its context. */
async function contextFor(message: ReceivedMessage): Promise<InvocationContext> {
  let seen: InvocationContext | undefined;
  const [fn] = queueFunctionsOf(
    registerAndCapture({
      serviceBus: [
        {
          name: 'probe',
          queueName: 'orders',
          connection: 'ServiceBusConnection',
          isSessionsEnabled: true,
          handler: async (_body, context) => {
            seen = context;
          },
        },
      ],
    }),
  );
  await invokeForMessage(fn, message, '00000000-0000-4000-8000-000000000001', undefined, () => undefined);
  if (seen === undefined) throw new Error('handler not called');
  return seen;
}

describe('the Service Bus trigger payload', () => {
  it('has the keys of the extension v5 binding contract (the .NET action objects aside)', () => {
    expect([...serviceBusBindingData(received()).keys()].sort()).toEqual(
      [
        'DeliveryCount',
        'DeadLetterSource',
        'LockToken',
        'ExpiresAtUtc',
        'ExpiresAt',
        'EnqueuedTimeUtc',
        'EnqueuedTime',
        'MessageId',
        'ContentType',
        'ReplyTo',
        'SequenceNumber',
        'To',
        'Subject',
        'Label',
        'CorrelationId',
        'ApplicationProperties',
        'UserProperties',
        'SessionId',
        'ReplyToSessionId',
        'PartitionKey',
        'TransactionPartitionKey',
      ].sort(),
    );
  });

  it('converts each value as the host does: strings as string, null as nothing, the rest as Newtonsoft JSON', () => {
    const metadata = serviceBusTriggerMetadata(received());
    expect(metadata.MessageId).toEqual({ string: 'T-1:abc' });
    expect(metadata.SessionId).toEqual({ string: 'O-17' });
    expect(metadata.CorrelationId).toEqual({});
    expect(metadata.DeliveryCount).toEqual({ json: '3' });
    expect(metadata.SequenceNumber).toEqual({ json: '41' });
    // DateTimeOffset.DateTime is of kind Unspecified: Newtonsoft writes no offset and no Z.
    expect(metadata.EnqueuedTimeUtc).toEqual({ json: '"2024-01-02T03:04:05.678"' });
    expect(metadata.EnqueuedTime).toEqual({ json: '"2024-01-02T03:04:05.678+00:00"' });
    expect(metadata.ExpiresAt).toEqual({ json: '"9999-12-31T23:59:59.9999999+00:00"' });
    expect(metadata.ApplicationProperties).toEqual({ json: '{"Sequence":2,"final":true,"batchId":"B-1"}' });
    // The fraction loses its trailing zeros, and its dot when it is zero (FFFFFFF).
    const whole = serviceBusTriggerMetadata(
      received({ enqueuedTimeUtc: Date.UTC(2024, 0, 2, 3, 4, 5, 500) }),
    );
    expect(whole.EnqueuedTimeUtc).toEqual({ json: '"2024-01-02T03:04:05.5"' });
    const round = serviceBusTriggerMetadata(received({ enqueuedTimeUtc: Date.UTC(2024, 0, 2, 3, 4, 5) }));
    expect(round.EnqueuedTimeUtc).toEqual({ json: '"2024-01-02T03:04:05"' });
  });

  it('reaches the handler as the Node library converts it', async () => {
    const context = await contextFor(received({ messageId: '12345', sessionId: '12345678901234567890' }));
    expect(context.triggerMetadata).toMatchObject({
      messageId: 12345,
      sessionId: 12345678901234567000,
      deliveryCount: 3,
      sequenceNumber: 41,
      enqueuedTimeUtc: '2024-01-02T03:04:05.678',
      applicationProperties: { sequence: 2, final: true, batchId: 'B-1' },
      userProperties: { sequence: 2, final: true, batchId: 'B-1' },
      lockToken: '5b0f9a1e-0000-4000-8000-000000000001',
    });
    expect(context.triggerMetadata?.correlationId).toBeUndefined();
    expect(context.options.trigger).toMatchObject({
      type: 'serviceBusTrigger',
      queueName: 'orders',
      connection: 'ServiceBusConnection',
      isSessionsEnabled: true,
    });
  });

  it.each([
    '12345',
    '007',
    '1e3',
    '1.50',
    '12345678901234567890',
    'true',
    'null',
    '{"A":1}',
    'O-17',
    ' 12',
    '\t\n\r{"A":[1]}',
    ' O-1',
    '-5',
    '"quoted"',
    '[1,2]',
    'falsehood',
    'nul',
    '',
    ' ',
    '\u00a012',
    '+1',
    '.5',
  ])('converts the id %s in the app exactly as the library does', async (id) => {
    const context = await contextFor(received({ sessionId: id }));
    expect(context.triggerMetadata?.sessionId).toEqual(asTheWorkerConverts(id));
  });
});
