/**
 * The one optimistic update: read, change, write on the etag, again when another writer won, with
 * one attempt limit; the result is the one of the change that was written.
 */
import { TransientError } from '../../src/domain/errors';
import { createEmbeddedStore } from '../../local/store/document-store';
import {
  MAX_WRITE_ATTEMPTS,
  updateDocument,
  updateOptimistically,
  type OptimisticTarget,
} from '../../src/services/optimistic-update';
import type { Document, DocumentContainer, Stored } from '../../src/services/ports';

interface Counter extends Document {
  pk: string;
  value: number;
}

function container(): DocumentContainer {
  return createEmbeddedStore().container('counters', '/pk');
}

const read = (counters: DocumentContainer) => () => counters.read<Counter>('p', 'c');
const contention = { code: 'counter-contention', subject: 'counter c' };

function increment(current: Stored<Counter> | undefined) {
  const value = (current?.document.value ?? 0) + 1;
  return { next: { id: 'c', pk: 'p', value }, result: value };
}

describe('updateDocument', () => {
  it('creates the document when absent and returns the change result', async () => {
    const counters = container();
    await expect(updateDocument(counters, read(counters), increment, contention)).resolves.toBe(1);
    expect((await counters.read<Counter>('p', 'c'))?.document.value).toBe(1);
  });

  it('decides again on what the other writer wrote, and returns the result of the change written', async () => {
    const counters = container();
    await counters.create({ id: 'c', pk: 'p', value: 10 });
    let interfered = false;
    const result = await updateDocument(
      counters,
      async () => {
        const stored = await counters.read<Counter>('p', 'c');
        if (!interfered && stored !== undefined) {
          // Another writer lands between this read and the write: the write must lose (412).
          interfered = true;
          await counters.replace({ ...stored.document, value: 100 });
        }
        return stored;
      },
      increment,
      contention,
    );
    expect(result).toBe(101);
    expect((await counters.read<Counter>('p', 'c'))?.document.value).toBe(101);
  });

  it('retries a create that lost to another creator (409) as a replace', async () => {
    const counters = container();
    let first = true;
    const result = await updateDocument(
      counters,
      async () => {
        const stored = await counters.read<Counter>('p', 'c');
        if (first) {
          first = false;
          await counters.create({ id: 'c', pk: 'p', value: 5 });
        }
        return stored;
      },
      increment,
      contention,
    );
    expect(result).toBe(6);
  });

  it('writes nothing when the change has no next version', async () => {
    const counters = container();
    await counters.create({ id: 'c', pk: 'p', value: 3 });
    const before = await counters.read<Counter>('p', 'c');
    const result = await updateDocument<Counter, string>(
      counters,
      read(counters),
      () => ({ next: undefined, result: 'unchanged' }),
      contention,
    );
    expect(result).toBe('unchanged');
    expect((await counters.read<Counter>('p', 'c'))?.etag).toBe(before?.etag);
  });
});

describe('updateOptimistically', () => {
  it(`gives up after ${MAX_WRITE_ATTEMPTS} lost writes with a TransientError naming what kept changing`, async () => {
    let writes = 0;
    const target: OptimisticTarget<Counter, number> = {
      read: async () => undefined,
      write: async () => {
        writes++;
        return { kind: 'lost' };
      },
    };
    const error: unknown = await updateOptimistically(
      target,
      async (current) => increment(current),
      contention,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(error).toMatchObject({ code: 'counter-contention' });
    expect((error as Error).message).toBe('counter c kept changing under 10 consecutive writes');
    expect(writes).toBe(MAX_WRITE_ATTEMPTS);
    expect(MAX_WRITE_ATTEMPTS).toBe(10);
  });

  it('returns what a write ended with, and tells read which attempt it is', async () => {
    const attempts: number[] = [];
    const target: OptimisticTarget<Counter, number> = {
      read: async (attempt) => {
        attempts.push(attempt);
        return undefined;
      },
      write: async () => (attempts.length < 3 ? { kind: 'lost' } : { kind: 'ended', result: -1 }),
    };
    await expect(
      updateOptimistically(target, async (current) => increment(current), contention),
    ).resolves.toBe(-1);
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('decides again on what the second read finds after a lost write', async () => {
    const stored = (value: number): Stored<Counter> => ({
      document: { id: 'c', pk: 'p', value },
      etag: `e${value}`,
    });
    const written: Array<[number, string | undefined]> = [];
    const target: OptimisticTarget<Counter, number> = {
      // The first read as a cache has it, the second as the store has it since.
      read: async (attempt) => (attempt === 1 ? stored(1) : stored(5)),
      write: async (next, current) => {
        written.push([next.value, current?.etag]);
        return written.length === 1 ? { kind: 'lost' } : { kind: 'written' };
      },
    };
    const change = async (current: Stored<Counter> | undefined) => increment(current);
    await expect(updateOptimistically(target, change, contention)).resolves.toBe(6);
    expect(written).toEqual([
      [2, 'e1'],
      [6, 'e5'],
    ]);
  });
});
