/**
 * The size limit on the Azure path follows the tier the Bicep deploys: the entry point
 * loaded with SERVICE_BUS_MAX_MESSAGE_BYTES as the Bicep writes it for each tier, its registered
 * `ledgerProcessor` handler given a ledger message of about 300 KB, which only Premium accepts.
 * Every field of a valid entry is bounded (docs/messages.md), so no valid entry comes near either
 * limit; what the tier decides is what the ledger's size checks let through: on Premium (1 MB) the
 * 300 KB entry, invalid, is parked with its body, as it arrived; under Standard's 256 KB the same
 * park would be refused by Service Bus, so it keeps only the body's size and hash. Before the
 * setting, the Azure path used the Standard limit on Premium too and threw the body away.
 * The consumer (`orderTransactions`) parks by the same limit.
 * The Service Bus sender is replaced by a recorder.
 */
import { InvocationContext } from '@azure/functions';
import type { OutgoingMessage } from '../../src/services/ports';
import { loadEntry, SETTINGS } from '../support/azure-entry';
import { maxMessageBytesSettingFor } from '../support/bicep-settings';

const sent: Array<{ queue: string; messages: readonly OutgoingMessage[] }> = [];

jest.doMock('../../src/adapters/azure/service-bus-sender', () => ({
  createServiceBusSender: () => ({
    send: (queue: string, messages: readonly OutgoingMessage[]) => {
      sent.push({ queue, messages });
      return Promise.resolve();
    },
    stats: {},
    close: () => Promise.resolve(),
  }),
}));

const BATCH = {
  batchId: 'B-large',
  entries: [
    {
      transactionId: 'T-1',
      orderId: 'O-1',
      sequence: 1,
      type: 'OrderCreated',
      // About 300 KB, over the field's bound: invalid. Over Standard's 256 KB, under Premium's 1 MB.
      data: { customerId: 'C'.repeat(300 * 1024), currency: 'EUR' },
    },
  ],
};

async function ledgerOnTier(tier: 'Standard' | 'Premium'): Promise<OutgoingMessage[]> {
  sent.length = 0;
  const { serviceBus } = loadEntry({
    ...SETTINGS,
    SERVICE_BUS_MAX_MESSAGE_BYTES: maxMessageBytesSettingFor(tier),
  });
  const ledger = serviceBus.mock.calls.find(([name]) => name === 'ledgerProcessor');
  if (ledger === undefined) throw new Error('ledgerProcessor not registered');
  const context = new InvocationContext({
    functionName: 'ledgerProcessor',
    triggerMetadata: { messageId: 'B-large', sessionId: 'main', deliveryCount: 1 },
  });
  await ledger[1].handler(BATCH, context);
  expect(sent.map(({ queue }) => queue)).toEqual(['parked']);
  return sent.flatMap(({ messages }) => messages);
}

describe('the ledger on Azure, by the Service Bus tier the Bicep deploys', () => {
  it('on Premium (1 MB) parks the 300 KB invalid entry with its body', async () => {
    const [parked] = await ledgerOnTier('Premium');
    expect(parked.applicationProperties?.parkReason).toBe('invalid');
    expect(parked.body).toEqual(BATCH.entries[0]);
  });

  it("under Standard's 256 KB keeps only the body's size and hash, as Service Bus would refuse the rest", async () => {
    const [parked] = await ledgerOnTier('Standard');
    expect(parked.applicationProperties?.parkReason).toBe('invalid');
    expect(parked.body).toMatchObject({ omitted: 'the parked body, over the size limit' });
    expect(parked.applicationProperties?.parkDescription).toMatch(/over the 262144-byte message limit/);
  });
});

async function orderTransactionsOnTier(tier: 'Standard' | 'Premium'): Promise<OutgoingMessage[]> {
  sent.length = 0;
  const { serviceBus } = loadEntry({
    ...SETTINGS,
    SERVICE_BUS_MAX_MESSAGE_BYTES: maxMessageBytesSettingFor(tier),
  });
  const consumer = serviceBus.mock.calls.find(([name]) => name === 'orderTransactions');
  if (consumer === undefined) throw new Error('orderTransactions not registered');
  const context = new InvocationContext({
    functionName: 'orderTransactions',
    triggerMetadata: { messageId: 'T-1:0123456789abcdef', sessionId: 'O-1', deliveryCount: 1 },
  });
  // The invalid entry as Premium's ledger forwards it: the consumer parks it before any store call.
  await consumer[1].handler(BATCH.entries[0], context);
  expect(sent.map(({ queue }) => queue)).toEqual(['parked']);
  return sent.flatMap(({ messages }) => messages);
}

describe('the consumer on Azure, by the Service Bus tier the Bicep deploys', () => {
  it('on Premium (1 MB) parks the 300 KB invalid entry with its body', async () => {
    const [parked] = await orderTransactionsOnTier('Premium');
    expect(parked.applicationProperties?.parkReason).toBe('invalid');
    expect(parked.body).toEqual(BATCH.entries[0]);
  });

  it("under Standard's 256 KB keeps only the body's size and hash", async () => {
    const [parked] = await orderTransactionsOnTier('Standard');
    expect(parked.body).toMatchObject({ omitted: 'the parked body, over the size limit' });
  });
});
