/**
 * Moves the order headers of a store written when a header's id was its orderId to the id every
 * header has now, `order` (ORDER_HEADER_ID; docs/documents.md, "Upgrading"). The app reads a header
 * only there: an order whose header is still under its orderId would be taken for a new one. Run
 * with the app stopped, before this version processes anything.
 */
import {
  HEADER_SLOT,
  ORDER_HEADER_ID,
  ORDER_KIND,
  type OrderDocument,
} from '../../src/services/order-documents';
import type { Document, DocumentContainer } from '../../src/services/ports';

export interface HeaderUpgrade {
  /** The orders whose header moved to `order`. */
  moved: string[];
  /** How many headers were under `order` already. */
  alreadyThere: number;
  /** Headers left where they are, and why: a person looks at each. */
  left: Array<{ orderId: string; reason: string }>;
}

/** The document as written by the app, without what the store adds to every document it returns. */
function withoutStoreFields(document: OrderDocument): Document {
  const fields: Document = { ...document };
  delete fields._etag;
  delete fields._ts;
  return fields;
}

/**
 * Each header not under `order` is moved in one transactional batch of its order's partition: the
 * original deleted on the etag read, the copy created under `order`. Both or neither: a header that
 * changed meanwhile (the app was not stopped), or an order that already has a header under `order`
 * (this version ran on the order before the upgrade), is left as it is and named. Running it again
 * moves what is left and changes nothing else.
 */
export async function upgradeOrderHeaders(orders: DocumentContainer): Promise<HeaderUpgrade> {
  const upgrade: HeaderUpgrade = { moved: [], alreadyThere: 0, left: [] };
  for (const { document, etag } of await orders.query<OrderDocument>({ where: { kind: ORDER_KIND } })) {
    if (document.id === ORDER_HEADER_ID) {
      upgrade.alreadyThere += 1;
      continue;
    }
    const { orderId } = document;
    // The original goes first: in a container with the unique key /slot, the two would share one.
    const result = await orders.batch(orderId, [
      { op: 'delete', id: document.id, ifMatch: etag },
      { op: 'create', document: { ...withoutStoreFields(document), id: ORDER_HEADER_ID, slot: HEADER_SLOT } },
    ]);
    if (result.ok) {
      upgrade.moved.push(orderId);
      continue;
    }
    const [deleted, created] = result.results.map((operation) => operation.status);
    upgrade.left.push({
      orderId,
      reason:
        created === 409
          ? `order ${orderId} has a header under "${ORDER_HEADER_ID}" besides the one under ${JSON.stringify(document.id)}: this version wrote to it before the upgrade; merge them by hand`
          : `the header under ${JSON.stringify(document.id)} changed or went while it was moved (${created}, ${deleted}): is the app stopped? Run the upgrade again`,
    });
  }
  return upgrade;
}
