/**
 * An estimate of the request units (RU) Cosmos DB would charge for the store operations the app
 * makes, from their kind, the size of the items and the number of indexed terms. Pure: the bench's
 * store meter (./store-meter) feeds it what it saw.
 *
 * Source: Microsoft Learn, "Understand request units consumption in Azure Cosmos DB"
 * (https://learn.microsoft.com/azure/cosmos-db/understand-request-unit-consumption, ms.date
 * 04/21/2026), whose figures are, in its own words, "illustrative":
 * - "Request Units consumption for an operation scales with document size": its table of RU by
 *   document size, read and write, 1 KB to 2,048 KB (DOCUMENT_SIZE_TABLE below; reads at session
 *   or eventual consistency, the Bicep's Session).
 * - Create: "5.0 (document size based) + 0.2 × 10 (indexing) = 7 RUs" for a 1 KB document with 10
 *   indexed terms: the size-based write charge plus 0.2 RU per indexed term.
 * - Replace: "5.0 (deletion) + 5.0 (insertion) + 0.2 × 2 (index deletion) + 0.2 × 2 (index
 *   insertion) = 10.8 RUs" for a 1 KB document with two modified indexed terms; "Updates
 *   approximately consume twice as many RUs as creates when only a small number of index terms
 *   change." The older page "Optimize request cost" says the same: "Inserting a 1 KB item without
 *   indexing costs around ~5.5 RUs. Replacing an item costs two times the charge required to insert
 *   the same item." (https://learn.microsoft.com/azure/cosmos-db/optimize-cost-reads-writes).
 * - Delete: "5.0 (document size) + 0.2 × 10 (index removal) = 7.0 RUs".
 * - Point read: the read column of the table ("1 KB 1.00 RU, 100 KB ~10.00 RUs").
 * - Time-to-live deletion is a background operation that "can consume a proportion of the
 *   provisioned throughput"; estimated here as a delete, and kept apart from the request charges.
 *
 * The rule of thumb, "about 5 RU flat plus about 0.38 RU per KB for writes", matches the
 * table up to 256 KB (4.95 RU at 1 KB, 98.29 at 256 KB: 0.37 RU per KB); above that the table rises
 * faster (625 RU at 1,024 KB), so the estimate interpolates the table itself.
 *
 * Approximations, each said where it is made: sizes between the table's rows are interpolated
 * linearly and items under 1 KB cost what 1 KB costs; the size is that of the JSON the app sends,
 * without the system properties Cosmos adds or its binary encoding; the indexed terms of an item
 * are its included paths plus `id` and `_ts` (always indexed, see the indexing policy page); a
 * transactional batch costs the sum of its operations; a refused write (409, 412, 404) and a
 * point read that finds nothing cost one RU, as Microsoft publishes no figure for them; a query is
 * estimated as the point reads of the items it returns, a lower bound.
 */

/** [KB, read RU, write RU], from the page's table. */
export const DOCUMENT_SIZE_TABLE: ReadonlyArray<readonly [number, number, number]> = [
  [1, 1.0, 4.95],
  [2, 1.04, 6.29],
  [4, 1.14, 6.67],
  [8, 1.33, 7.04],
  [16, 1.67, 9.52],
  [32, 2.19, 11.23],
  [64, 4.76, 22.67],
  [128, 9.95, 48.19],
  [256, 20.28, 98.29],
  [512, 40.95, 184.57],
  [1024, 145.9, 625.0],
  [2048, 291.8, 1250.0],
];

/** RU per indexed term added or removed ("0.2 × 10 (indexing)"). */
export const RU_PER_INDEXED_TERM = 0.2;

/** What a refused write or a read of nothing is estimated at (no published figure). */
export const RU_REFUSED = 1;

/** Terms every item has in the index whatever the policy: `id` and `_ts` (indexing policy page). */
export const SYSTEM_INDEXED_TERMS = 2;

const READ = 1;
const WRITE = 2;

function interpolate(bytes: number, column: typeof READ | typeof WRITE): number {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`item size ${bytes} is not a size`);
  const kb = Math.max(1, bytes / 1024);
  const table = DOCUMENT_SIZE_TABLE;
  for (let i = 1; i < table.length; i++) {
    const [hiKb] = table[i];
    if (kb <= hiKb) {
      const [loKb] = table[i - 1];
      const lo = table[i - 1][column];
      const hi = table[i][column];
      return lo + ((hi - lo) * (kb - loKb)) / (hiKb - loKb);
    }
  }
  // Past 2 MB (Cosmos's item size limit): the last row's slope, only so that the function is total.
  const [lastKb] = table[table.length - 1];
  const [prevKb] = table[table.length - 2];
  const last = table[table.length - 1][column];
  const prev = table[table.length - 2][column];
  return last + ((last - prev) * (kb - lastKb)) / (lastKb - prevKb);
}

/** A point read of an item of this many bytes. */
export function readCharge(bytes: number): number {
  return interpolate(bytes, READ);
}

/** The size-based part of writing (or deleting) an item of this many bytes. */
export function writeSizeCharge(bytes: number): number {
  return interpolate(bytes, WRITE);
}

/** Creating an item with this many indexed terms. */
export function createCharge(bytes: number, indexedTerms: number): number {
  return writeSizeCharge(bytes) + RU_PER_INDEXED_TERM * indexedTerms;
}

/**
 * Replacing an item: the old one deleted, the new one inserted, and each indexed term that changed
 * removed and added (a term only added or only removed counts once: pass the two counts).
 */
export function replaceCharge(
  oldBytes: number,
  newBytes: number,
  termsRemoved: number,
  termsAdded: number,
): number {
  return (
    writeSizeCharge(oldBytes) + writeSizeCharge(newBytes) + RU_PER_INDEXED_TERM * (termsRemoved + termsAdded)
  );
}

/** Deleting an item with this many indexed terms (a TTL expiry too, in the background). */
export function deleteCharge(bytes: number, indexedTerms: number): number {
  return writeSizeCharge(bytes) + RU_PER_INDEXED_TERM * indexedTerms;
}

/** A query, as the point reads of what it returns: a lower bound (the page lists many more factors). */
export function queryCharge(returnedBytes: readonly number[]): number {
  return returnedBytes.reduce((sum, bytes) => sum + readCharge(bytes), 0);
}
