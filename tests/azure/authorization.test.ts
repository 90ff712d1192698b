/**
 * A role not in effect yet is told apart from every other failure: the Azure adapters make of the
 * SDKs' own refusals (Service Bus `ServiceBusError` code `UnauthorizedAccess`, Cosmos DB 401/403) an
 * AuthorizationPendingError naming the role the call needs and where, which the handlers wait out.
 * The embedded runtime's `authorizationDelay` fault raises the same shapes through the same
 * classification. And every call to Azure is held to the call bound.
 */
import { ErrorResponse, type Container } from '@azure/cosmos';
import { ServiceBusError, type ServiceBusErrorCode, type ServiceBusSender } from '@azure/service-bus';
import { AuthorizationPendingError, PermanentError, TransientError } from '../../src/domain/errors';
import { createCosmosContainer } from '../../src/adapters/azure/cosmos-store';
import {
  COSMOS_DATA_CONTRIBUTOR_ROLE,
  COSMOS_JOURNAL_APPENDER_ROLE,
  storeFailure,
} from '../../src/adapters/azure/cosmos-failures';
import {
  classify,
  createServiceBusSender,
  type SenderClient,
} from '../../src/adapters/azure/service-bus-sender';
import { SERVICE_BUS_SENDER_ROLE, senderRoleOn } from '../../src/adapters/azure/service-bus-failures';
import { withinCallBound } from '../../src/adapters/azure/call-bound';
import { cosmosRefusal, serviceBusRefusal } from '../../local/outages';

const NAMESPACE = 'ns.servicebus.windows.net';

/** A client whose senders fail (or hang) as told, recording the abort signals they were given. */
function senderClient(behaviour: () => Promise<never>): { client: SenderClient; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const sender = {
    createMessageBatch: async (options?: { abortSignal?: AbortSignal }) => {
      if (options?.abortSignal !== undefined) signals.push(options.abortSignal);
      return behaviour();
    },
    close: async () => undefined,
  } as unknown as ServiceBusSender;
  const client = { createSender: () => sender, close: async () => undefined } as unknown as SenderClient;
  return { client, signals };
}

const message = { messageId: 'm1', sessionId: 'O-1', body: {} };

/**
 * A ServiceBusError as the SDK translates the service's refusal (amqp:unauthorized-access): code
 * `UnauthorizedAccess`, not retryable (the constructor alone leaves `retryable` true).
 */
function refusedBySdk(text: string): ServiceBusError {
  return Object.assign(new ServiceBusError(text, 'UnauthorizedAccess'), { retryable: false });
}

function notRetryable(text: string, code: ServiceBusErrorCode): ServiceBusError {
  return Object.assign(new ServiceBusError(text, code), { retryable: false });
}

describe('Service Bus: UnauthorizedAccess is a role not in effect yet', () => {
  it('the sender names the Data Sender role on the queue', async () => {
    const refusal = refusedBySdk("Unauthorized access. 'Send' claim(s) are required");
    const { client } = senderClient(() => Promise.reject(refusal));
    const sender = createServiceBusSender(NAMESPACE, {} as never, { client });
    const thrown = await sender.send('parked', [message]).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(AuthorizationPendingError);
    expect(thrown).toMatchObject({
      kind: 'transient',
      code: 'authorization-pending',
      role: SERVICE_BUS_SENDER_ROLE,
      resource: `queue parked of ${NAMESPACE}`,
      cause: refusal,
    });
    expect((thrown as Error).message).toMatch(
      /^sending to parked failed \(UnauthorizedAccess\): .*needs the role Azure Service Bus Data Sender on queue parked of ns\.servicebus\.windows\.net/,
    );
  });

  it('other Service Bus errors keep their kind', () => {
    expect(classify(new ServiceBusError('busy', 'ServiceBusy'), 'sending to parked')).toBeInstanceOf(
      TransientError,
    );
    expect(
      classify(
        notRetryable('gone', 'MessagingEntityNotFound'),
        'sending to parked',
        senderRoleOn(NAMESPACE, 'parked'),
      ),
    ).toBeInstanceOf(PermanentError);
    expect(classify(notRetryable('gone', 'MessagingEntityNotFound'), 'sending to parked')).not.toBeInstanceOf(
      AuthorizationPendingError,
    );
  });

  it('a one-shot call that names no role (the operations) keeps a refusal permanent', () => {
    const refusal = refusedBySdk('Unauthorized access');
    expect(classify(refusal, 'peeking parked')).toBeInstanceOf(PermanentError);
  });

  it('the embedded fault raises the SDK’s shape, classified the same', () => {
    const embedded = serviceBusRefusal('parked');
    const real = refusedBySdk(embedded.message);
    const needs = senderRoleOn(NAMESPACE, 'parked');
    expect(embedded).toMatchObject({ name: real.name, code: real.code, retryable: real.retryable });
    expect(classify(embedded, 'sending to parked', needs).message).toBe(
      classify(real, 'sending to parked', needs).message,
    );
  });
});

describe('Cosmos DB: 401 and 403 are a role not in effect yet', () => {
  const failing = (error: unknown): Container => {
    const reject = (): Promise<never> => Promise.reject(error);
    return {
      id: 'orders',
      database: { id: 'orderpipeline' },
      items: { create: reject, upsert: reject, batch: reject, query: () => ({ fetchAll: reject }) },
      item: () => ({ read: reject, replace: reject, delete: reject }),
    } as unknown as Container;
  };
  const status = (code: number, substatus?: number): ErrorResponse =>
    Object.assign(new ErrorResponse(`status ${code}`), { code, substatus });

  it.each([401, 403])(
    'status %i, on every call, names the data contributor role on the container',
    async (code) => {
      const original = status(code, code === 403 ? 5301 : undefined);
      const orders = createCosmosContainer(failing(original), '/orderId');
      const calls: Array<() => Promise<unknown>> = [
        () => orders.create({ id: 'o1', orderId: 'o1' }),
        () => orders.read('o1', 'o1'),
        () => orders.replace({ id: 'o1', orderId: 'o1' }),
        () => orders.upsert({ id: 'o1', orderId: 'o1' }),
        () => orders.delete('o1', 'o1'),
        () => orders.batch('o1', [{ op: 'create', document: { id: 'o1', orderId: 'o1' } }]),
        () => orders.query({ partitionKey: 'o1' }),
      ];
      for (const call of calls) {
        const thrown = await call().catch((error: unknown) => error);
        expect(thrown).toBeInstanceOf(AuthorizationPendingError);
        expect(thrown).toMatchObject({
          role: COSMOS_DATA_CONTRIBUTOR_ROLE,
          resource: 'container orders of database orderpipeline',
          cause: original,
        });
      }
    },
  );

  it("names the journal's own role on the operators' journal", async () => {
    const journal = createCosmosContainer(
      { ...failing(status(403, 5301)), id: 'operations' } as unknown as Container,
      '/partition',
      { role: COSMOS_JOURNAL_APPENDER_ROLE },
    );
    await expect(journal.create({ id: 'a', partition: 'audit:x' })).rejects.toMatchObject({
      role: COSMOS_JOURNAL_APPENDER_ROLE,
      resource: 'container operations of database orderpipeline',
    });
  });

  it('the statusCode field, as REST errors carry it, counts too', () => {
    const refusal = Object.assign(new Error('Forbidden'), { statusCode: 403 });
    expect(storeFailure(refusal, 'read', { role: 'r', resource: 'x' })).toBeInstanceOf(
      AuthorizationPendingError,
    );
  });

  it('a batch, whose error keeps only the message, is told by the message', () => {
    const needs = {
      role: COSMOS_DATA_CONTRIBUTOR_ROLE,
      resource: 'container orders of database orderpipeline',
    };
    expect(storeFailure(cosmosRefusal('batch'), 'batch', needs)).toBeInstanceOf(AuthorizationPendingError);
    expect(storeFailure(new Error('Batch request error: bad request'), 'batch', needs)).toBeInstanceOf(
      PermanentError,
    );
  });

  it('the embedded fault raises the SDK’s shape, classified the same', () => {
    const needs = {
      role: COSMOS_DATA_CONTRIBUTOR_ROLE,
      resource: 'container orders of database orderpipeline',
    };
    const embedded = cosmosRefusal('read');
    const real = Object.assign(new ErrorResponse(embedded.message), { code: 403, substatus: 5301 });
    expect(storeFailure(embedded, 'read', needs).message).toBe(storeFailure(real, 'read', needs).message);
  });
});

describe('the call bound', () => {
  it('gives up on a call at the bound, and fires its abort signal', async () => {
    let signal: AbortSignal | undefined;
    const thrown = await withinCallBound('Cosmos read', 20, (abortSignal) => {
      signal = abortSignal;
      return new Promise<never>(() => undefined);
    }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(TransientError);
    expect((thrown as Error).message).toBe(
      'Cosmos read took more than 0.02 s, the most one call to Azure may take; given up',
    );
    expect(signal?.aborted).toBe(true);
  });

  it('a send that hangs is given up on at the bound', async () => {
    const { client, signals } = senderClient(() => new Promise<never>(() => undefined));
    const sender = createServiceBusSender(NAMESPACE, {} as never, { client, callBoundMs: 20 });
    await expect(sender.send('parked', [message])).rejects.toMatchObject({ code: 'call-timed-out' });
    expect(signals.map((signal) => signal.aborted)).toEqual([true]);
  });

  it('a Cosmos call that hangs is given up on at the bound', async () => {
    const hanging = (): Promise<never> => new Promise<never>(() => undefined);
    const container = {
      id: 'orders',
      items: { create: hanging },
      item: () => ({ read: hanging }),
    } as unknown as Container;
    const orders = createCosmosContainer(container, '/orderId', { callBoundMs: 20 });
    await expect(orders.read('o1', 'o1')).rejects.toMatchObject({
      kind: 'transient',
      code: 'call-timed-out',
    });
  });
});
