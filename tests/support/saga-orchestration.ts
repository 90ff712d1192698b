/**
 * The saga's orchestrations and activities (src/functions/fulfill-order.ts) on the embedded durable
 * driver's virtual time, over the built-in downstream on the embedded store: hours of backoff and
 * review timeouts run in milliseconds, and each test may wrap the store or the downstream to fail.
 */
import { registerAndCapture } from '../../local/worker/register';
import {
  createDurableDriver,
  type DurableDriver,
  type DurableDriverFaults,
} from '../../local/durable/driver';
import { sagaDefinitions, type SagaPolicy } from '../../src/functions/fulfill-order';
import { fulfillmentInstanceId } from '../../src/domain/saga';
import { readSagaRecord, type SagaRecord } from '../../src/services/fulfillment/saga-record';
import { FULFILL_ORDER } from '../../src/services/fulfillment/starter';
import type { Downstream } from '../../src/services/fulfillment/downstream-ports';
import type { DocumentContainer, FulfillmentInput } from '../../src/services/ports';
import { NOW, sagaDeps, world, type World, type WorldOptions } from './saga';

export const POLICY: SagaPolicy = {
  retry: { firstIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 10_000, maxAttempts: 3 },
  reviewTimeoutMinutes: 60,
  cancellationFeePercent: 10,
};

export interface SagaHarness {
  w: World;
  driver: DurableDriver;
  start(input: FulfillmentInput): Promise<void>;
  record(orderId: string): Promise<SagaRecord>;
  runtimeStatus(instanceId: string): Promise<string | undefined>;
}

export interface HarnessOptions extends WorldOptions {
  policy?: Partial<SagaPolicy>;
  /** Wraps the orders container the saga's activities write the saga record through. */
  orders?: (orders: DocumentContainer) => DocumentContainer;
  downstream?: (builtIn: Downstream) => Downstream;
  faults?: DurableDriverFaults;
}

const harnesses: SagaHarness[] = [];

export async function stopHarnesses(): Promise<void> {
  await Promise.all(harnesses.splice(0).map((h) => h.driver.stop()));
}

export function sagaHarness(options: HarnessOptions = {}): SagaHarness {
  const w = world(options);
  const deps = sagaDeps(w, options.downstream?.(w.downstream) ?? w.downstream);
  const orders = options.orders?.(w.orders) ?? w.orders;
  const policy = { ...POLICY, ...options.policy };
  const driver = createDurableDriver({
    functions: registerAndCapture(sagaDefinitions({ ...deps, orders }, policy)),
    clock: { mode: 'virtual', start: NOW },
    faults: options.faults ?? {},
  });
  driver.start();
  const harness: SagaHarness = {
    w,
    driver,
    async start(input) {
      await driver.client.startNew(FULFILL_ORDER, fulfillmentInstanceId(input.orderId), input);
    },
    async record(orderId) {
      const record = await readSagaRecord(w.orders, orderId);
      if (record === undefined) throw new Error(`no saga record for ${orderId}`);
      return record;
    },
    async runtimeStatus(instanceId) {
      return (await driver.client.getStatus(instanceId))?.runtimeStatus;
    },
  };
  harnesses.push(harness);
  return harness;
}

/**
 * An orders container whose writes of the saga record fail transiently, before reaching the store,
 * while `when` says so for the record about to be written.
 */
export function failingRecordWrites(when: (next: SagaRecord) => boolean): {
  wrap: (orders: DocumentContainer) => DocumentContainer;
  failures: () => number;
} {
  let failures = 0;
  const check = (document: { id: string }): void => {
    if (document.id.startsWith('saga:') && when(document as unknown as SagaRecord)) {
      failures += 1;
      throw new Error(`injected: saga record write refused (${failures})`);
    }
  };
  return {
    failures: () => failures,
    wrap: (orders) => ({
      name: orders.name,
      partitionKeyPath: orders.partitionKeyPath,
      create: async (document) => (check(document), orders.create(document)),
      read: (partitionKey, id) => orders.read(partitionKey, id),
      replace: async (document, options) => (check(document), orders.replace(document, options)),
      upsert: async (document, options) => (check(document), orders.upsert(document, options)),
      delete: (partitionKey, id, options) => orders.delete(partitionKey, id, options),
      batch: (partitionKey, operations) => orders.batch(partitionKey, operations),
      query: (spec) => orders.query(spec),
    }),
  };
}
