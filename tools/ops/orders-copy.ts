/**
 * Copies an `orders` container into one created with the unique key `/slot` (docs/documents.md,
 * "Upgrading to the unique slot"). Cosmos DB sets a unique key only when it creates a container, so
 * a deployment whose `orders` was created without it moves its documents out and back: each
 * document is written with the `slot` this version gives its kind (a record its sequence, the header
 * `order`, the saga record `saga`), and an order waiting on a missing entry gets its gap document.
 * Run with the app stopped. Idempotent: each document is upserted under its own id.
 */
import { PermanentError } from '../../src/domain/errors';
import { waitingFor } from '../../src/domain/order';
import {
  gapDocument,
  HEADER_SLOT,
  ORDER_GAP_ID,
  ORDER_HEADER_ID,
  ORDER_KIND,
  SAGA_SLOT,
  TRANSACTION_KIND,
  type OrderDocument,
  type TransactionDocument,
} from '../../src/services/order-documents';
import type { Document, DocumentContainer } from '../../src/services/ports';

export interface OrdersCopy {
  /** Orders (partitions) copied. */
  orders: number;
  /** Documents written to the target, gap documents included. */
  documents: number;
  /** Orders given a gap document: they wait on a missing entry. */
  gaps: number;
  /** Documents not copied, and why: a person looks at each. */
  left: Array<{ orderId: string; id: string; reason: string }>;
}

/** The document as written by the app, without what the store adds to every document it returns. */
function withoutStoreFields(document: Document): Document {
  const fields: Document = { ...document };
  delete fields._etag;
  delete fields._ts;
  return fields;
}

/** The `slot` this version gives a document of the orders container, by its kind; null: not ours. */
function slotOf(document: Document): string | number | null {
  switch (document.kind) {
    case ORDER_KIND:
      return HEADER_SLOT;
    case 'saga':
      return SAGA_SLOT;
    case TRANSACTION_KIND:
      return (document as unknown as TransactionDocument).sequence;
    case 'gap':
      return (document as unknown as { slot: number }).slot;
    default:
      return null;
  }
}

/** Null once the document is in the target, else why not (another document there holds its slot). */
async function upserted(target: DocumentContainer, document: Document): Promise<string | null> {
  try {
    const written = await target.upsert(document);
    return written.status === 412
      ? 'refused by the target: another document of the order holds its slot'
      : null;
  } catch (error) {
    if (error instanceof PermanentError) return `refused by the target: ${error.message}`;
    throw error;
  }
}

/** Copies every order of `source` into `target`, one partition at a time. */
export async function copyOrders(source: DocumentContainer, target: DocumentContainer): Promise<OrdersCopy> {
  const copy: OrdersCopy = { orders: 0, documents: 0, gaps: 0, left: [] };
  const headers = await source.query<OrderDocument>({ where: { kind: ORDER_KIND } });
  for (const { document: header } of headers) {
    const { orderId } = header;
    copy.orders += 1;
    for (const { document } of await source.query<Document>({ partitionKey: orderId })) {
      if (document.kind === ORDER_KIND && document.id !== ORDER_HEADER_ID) {
        copy.left.push({
          orderId,
          id: document.id,
          reason: 'a header under its orderId: run `npm run ops -- headers upgrade` on the source first',
        });
        continue;
      }
      const slot = slotOf(document);
      if (slot === null) {
        copy.left.push({
          orderId,
          id: document.id,
          reason: `a document of kind ${JSON.stringify(document.kind)} this version does not write`,
        });
        continue;
      }
      const refusal = await upserted(target, { ...withoutStoreFields(document), slot });
      if (refusal !== null) {
        copy.left.push({ orderId, id: document.id, reason: refusal });
        continue;
      }
      copy.documents += 1;
    }
    // An order that waits on a missing entry holds its slot with the gap document (docs/documents.md).
    const awaited = waitingFor(header);
    if (awaited !== null && !(await source.read(orderId, ORDER_GAP_ID))) {
      await target.upsert(gapDocument(orderId, awaited));
      copy.documents += 1;
      copy.gaps += 1;
    }
  }
  return copy;
}
