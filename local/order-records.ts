/**
 * Every order's transaction records at once, for the run's report and the bench: one
 * cross-partition query of the orders container. No code path of the app on Azure reads every order.
 */
import type { TransactionRecord } from '../src/domain/order';
import {
  TRANSACTION_KIND,
  transactionRecordOf,
  type TransactionDocument,
} from '../src/services/order-documents';
import type { DocumentContainer } from '../src/services/ports';

/** By orderId, then transactionId. */
export async function transactionRecordsByOrder(
  orders: DocumentContainer,
): Promise<Map<string, Map<string, TransactionRecord>>> {
  const byOrder = new Map<string, Map<string, TransactionRecord>>();
  for (const { document } of await orders.query<TransactionDocument>({ where: { kind: TRANSACTION_KIND } })) {
    let records = byOrder.get(document.orderId);
    if (records === undefined) byOrder.set(document.orderId, (records = new Map()));
    records.set(document.transactionId, transactionRecordOf(document));
  }
  return byOrder;
}
