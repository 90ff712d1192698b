/**
 * What the Functions host sends the worker for one Service Bus message (extension v5).
 *
 * Trigger metadata: the binding data of azure-sdk-for-net
 * `sdk/servicebus/Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Triggers/ServiceBusTriggerBindingStrategy.cs`
 * (`GetBindingData` / `AddBindingData` for a single message), key by key with its CLR type, each
 * converted by the host's `ToRpc` (./rpc-values). So `DeliveryCount` and `SequenceNumber` arrive as
 * JSON numbers, `EnqueuedTimeUtc` as `DateTimeOffset.DateTime` serialised by Newtonsoft (no offset,
 * no `Z`), `EnqueuedTime` with `+00:00`, `ApplicationProperties` (and its back-compat twin
 * `UserProperties`) as a JSON object, and `MessageId`, `SessionId`, `CorrelationId` as strings, which
 * the Node worker then runs through `tryJsonParse` (azure-functions-nodejs-library
 * `src/converters/fromRpcTriggerMetadata.ts` → `fromRpcTypedData.ts`). Absent values (a null
 * `CorrelationId`) are sent with no field set. The action objects the extension also binds
 * (`MessageReceiver`, `MessageSession`, `MessageActions`, `SessionActions`, `ReceiveActions`,
 * `Client`) are .NET clients, of no use to a Node function; they are left out.
 *
 * Input data: the trigger's value, the message body as text (`string`; the worker parses JSON text).
 */
import type { ReceivedMessage } from '../broker/broker';
import { deliveredJson } from '../broker/clone-body';
import type { RpcTypedData } from './core-types';
import { toRpc, type DotNetValue } from './rpc-values';

/** The extension's binding data for one message, as .NET values. */
export function serviceBusBindingData(message: ReceivedMessage): Map<string, DotNetValue> {
  const data = new Map<string, DotNetValue>();
  const text = (value: string | undefined): DotNetValue => ({ clr: 'string', value });
  data.set('DeliveryCount', { clr: 'int', value: message.deliveryCount });
  // Set when a message was moved to a dead-letter queue and read from there; the host serves no DLQ.
  data.set('DeadLetterSource', text(undefined));
  data.set('LockToken', text(message.lockToken));
  // The broker has no time-to-live: every message's ExpiresAt is the SDK's DateTimeOffset.MaxValue.
  data.set('ExpiresAtUtc', { clr: 'DateTime.MaxValue' });
  data.set('ExpiresAt', { clr: 'DateTimeOffset.MaxValue' });
  data.set('EnqueuedTimeUtc', { clr: 'DateTime', value: message.enqueuedTimeUtc });
  data.set('EnqueuedTime', { clr: 'DateTimeOffset', value: message.enqueuedTimeUtc });
  data.set('MessageId', text(message.messageId));
  data.set('ContentType', text(message.contentType));
  data.set('ReplyTo', text(undefined));
  data.set('SequenceNumber', { clr: 'long', value: message.sequenceNumber });
  data.set('To', text(undefined));
  data.set('Subject', text(message.subject));
  data.set('Label', text(message.subject));
  data.set('CorrelationId', text(message.correlationId));
  data.set('ApplicationProperties', { clr: 'dictionary', value: message.applicationProperties });
  data.set('UserProperties', { clr: 'dictionary', value: message.applicationProperties });
  data.set('SessionId', text(message.sessionId));
  data.set('ReplyToSessionId', text(undefined));
  data.set('PartitionKey', text(undefined));
  data.set('TransactionPartitionKey', text(undefined));
  return data;
}

/** The invocation request's `triggerMetadata`: every binding data value through the host's `ToRpc`. */
export function serviceBusTriggerMetadata(message: ReceivedMessage): Record<string, RpcTypedData> {
  const metadata: Record<string, RpcTypedData> = {};
  for (const [key, value] of serviceBusBindingData(message)) metadata[key] = toRpc(value);
  return metadata;
}

/** The trigger's input data: the body as the text a Service Bus client put on the wire. */
export function serviceBusBody(message: ReceivedMessage): RpcTypedData {
  // Held as JSON text by the broker: that text, as the SDK wrote it on the wire, with no parse.
  const json = deliveredJson(message);
  if (json !== undefined) return { string: json };
  const { body } = message;
  if (typeof body === 'string') return { string: body };
  if (body instanceof Uint8Array) return { bytes: body };
  return { string: JSON.stringify(body) ?? '' };
}
