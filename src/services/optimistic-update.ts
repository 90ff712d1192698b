/**
 * One optimistic update, written once: read the document, compute its next version, write it on the
 * read's etag, and when another writer won in between, read again and decide again. Cosmos reports
 * a lost race as 412 (ifMatch no longer matches), 409 (a create found the id taken) or 404 (the
 * document was deleted under a replace): https://learn.microsoft.com/en-us/rest/api/cosmos-db/http-status-codes-for-cosmosdb
 *
 * The change function says both what to write and what the caller learns (it may first read what
 * its decision needs, e.g. the records of the order's consumer, then decides purely):
 * `{ next, result }`, `next` undefined to write nothing. Nothing is smuggled out through a variable
 * of the caller's, so a decision made on a version that lost the race is never mistaken for the last.
 */
import { TransientError } from '../domain/errors';
import type { Document, DocumentContainer, Stored } from './ports';

/** Writes lost to other writers before giving up with a TransientError (the caller's retry then runs). */
export const MAX_WRITE_ATTEMPTS = 10;

export interface Change<T extends Document, R> {
  /** The version to write; undefined writes nothing and returns `result` at once. */
  next: T | undefined;
  result: R;
}

/** What one write came to: it landed, another writer won, or the write ended the update with a result of its own. */
export type WriteOutcome<R> = { kind: 'written' } | { kind: 'lost' } | { kind: 'ended'; result: R };

export interface OptimisticTarget<T extends Document, R> {
  /** The document as stored now; `attempt` counts from 1 (the first may come from a cache). */
  read(attempt: number): Promise<Stored<T> | undefined>;
  /** Writes `next` over `current` (undefined: absent), on `current`'s etag. */
  write(next: T, current: Stored<T> | undefined, result: R): Promise<WriteOutcome<R>>;
}

export interface Contention {
  code: string;
  /** What kept changing, for the error: `stock of SKU-1`. */
  subject: string;
}

/**
 * Applies `change` until one write lands or nothing needs writing, at most MAX_WRITE_ATTEMPTS times.
 * Returns the result of the change that was written (or needed no write), or the one a write ended with.
 */
export async function updateOptimistically<T extends Document, R>(
  target: OptimisticTarget<T, R>,
  change: (current: Stored<T> | undefined) => Promise<Change<T, R>>,
  contention: Contention,
): Promise<R> {
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const current = await target.read(attempt);
    const { next, result } = await change(current);
    if (next === undefined) return result;
    const outcome = await target.write(next, current, result);
    if (outcome.kind === 'written') return result;
    if (outcome.kind === 'ended') return outcome.result;
  }
  throw new TransientError(
    contention.code,
    `${contention.subject} kept changing under ${MAX_WRITE_ATTEMPTS} consecutive writes`,
  );
}

/** The plain target: one document, created when absent, else replaced on its etag. */
export function documentTarget<T extends Document, R>(
  container: DocumentContainer,
  read: () => Promise<Stored<T> | undefined>,
): OptimisticTarget<T, R> {
  return {
    read: () => read(),
    async write(next, current) {
      const written =
        current === undefined
          ? await container.create(next)
          : await container.replace(next, { ifMatch: current.etag });
      return written.status === 200 || written.status === 201 ? { kind: 'written' } : { kind: 'lost' };
    },
  };
}

/** `updateOptimistically` on one document of `container`, as `read` finds it. */
export async function updateDocument<T extends Document, R>(
  container: DocumentContainer,
  read: () => Promise<Stored<T> | undefined>,
  change: (current: Stored<T> | undefined) => Change<T, R>,
  contention: Contention,
): Promise<R> {
  return updateOptimistically(
    documentTarget<T, R>(container, read),
    async (current) => change(current),
    contention,
  );
}
