import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import fc from 'fast-check';
import { canonicalJson, entryDigest, entryMessageId, sha256Hex } from '../../src/domain/digest';
import { parseEntryMessage, validateEntry, type Entry } from '../../src/domain/entry';
import { rawAdded, rawAmended, rawCreated, rawDeleted, type Raw } from '../support/domain';

/**
 * RFC 8785's canonical text, as the `canonicalize` package writes it. The package is ESM only, which
 * Jest's CommonJS runtime cannot load: a Node process of its own runs it, one JSON value a line.
 */
function rfc8785Process(): { canonicalize(value: unknown): Promise<string>; close(): Promise<unknown> } {
  const script = [
    "import canonicalize from 'canonicalize';",
    "import { createInterface } from 'node:readline';",
    'for await (const line of createInterface({ input: process.stdin })) {',
    '  let answer;',
    '  try { answer = { text: canonicalize(JSON.parse(line)) }; } catch (error) { answer = { error: String(error) }; }',
    "  process.stdout.write(JSON.stringify(answer) + '\\n');",
    '}',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: resolve(__dirname, '../..'),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: Array<{ resolve(text: string): void; reject(error: Error): void }> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const answer = JSON.parse(line) as { text: string } | { error: string };
    const next = waiting.shift();
    if ('text' in answer) next?.resolve(answer.text);
    else next?.reject(new Error(answer.error));
  });
  child.on('exit', (code) => {
    for (const next of waiting.splice(0)) next.reject(new Error(`canonicalize process exited with ${code}`));
  });
  return {
    canonicalize: (value) =>
      new Promise((resolveText, reject) => {
        waiting.push({ resolve: resolveText, reject });
        child.stdin.write(`${JSON.stringify(value)}\n`);
      }),
    close: () => {
      child.stdin.end();
      return child.exitCode === null ? once(child, 'exit') : Promise.resolve();
    },
  };
}

const rfc8785 = rfc8785Process();
afterAll(() => rfc8785.close());

function entryOf(body: unknown): Entry {
  const result = parseEntryMessage(body);
  if (!result.ok) throw new Error(`expected a valid entry, got ${result.problems.join('; ')}`);
  return result.value;
}

function digestOf(body: unknown): string {
  return entryDigest(entryOf(body));
}

describe('canonicalJson', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 'x' }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":"x","z":1}]},"b":1}',
    );
  });

  it('leaves out undefined fields, as JSON does', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it('writes scalars as JSON', () => {
    expect([canonicalJson('T-1'), canonicalJson(3), canonicalJson(true), canonicalJson(null)]).toEqual([
      '"T-1"',
      '3',
      'true',
      'null',
    ]);
  });

  it('pins the canonical text of an entry: message ids already sent depend on it', () => {
    const entry = entryOf(rawAdded(2, 'T-2', 2, 1250, { final: true }));
    const text =
      '{"data":{"quantity":2,"sku":"SKU-T-2","unitPrice":1250},"final":true,"orderId":"O-1",' +
      '"sequence":2,"transactionId":"T-2","type":"TransactionAdded"}';
    expect(canonicalJson(entry)).toBe(text);
    expect(entryDigest(entry)).toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('pins the digest of every type of entry: stored in transaction records for ever', () => {
    // Digests written by the release that had a hand-written canonical writer beside canonicalJson.
    const pinned: Array<[Raw, string]> = [
      [rawCreated(1, 'T-1'), '57abb52233921287cc2643614312e151ce06b930c708581df1cdbfd13cf7cccf'],
      [
        rawAdded(2, 'T-2', 2, 1250, { final: true }),
        '5cdc9b7fc24fe5bf4f4b6e75ccaa68423c9b1e5218e45c8d5d6de1828c78940a',
      ],
      [
        rawAmended(3, 'T-3', 'T-2', { quantity: 5 }),
        '1b89550595f540789ab7bf7fe619e3ff2fb134e3b6517238f9bfbfae8aec1476',
      ],
      [
        rawAmended(4, 'T-4', 'T-2', { unitPrice: 0 }),
        '00797123b3ec33c34da91562b4057c49b1e169946f2c03681e6b222fa2d5cc9c',
      ],
      [
        rawDeleted(5, 'T-5', { data: { reason: 'naïve — 日本 🎉' } }),
        '59c4fa54bcd1b0709c3b8cb9a1a6c7e6373d6a12fde9c4941e059dd402116dcc',
      ],
      [rawDeleted(6, 'T-6'), '5606eda316382e4a9c970c5d740c3957b0fd7c7cf61e92e5c874ae4f86ee2ef0'],
    ];
    expect(pinned.map(([raw]) => digestOf(raw))).toEqual(pinned.map(([, digest]) => digest));
  });
});

describe('canonicalJson and RFC 8785 (the canonicalize package)', () => {
  // The values JSON can hold. Where the two legitimately differ, the generator stays out: an
  // undefined array element (canonicalJson writes nothing, as Array.prototype.join does;
  // canonicalize writes null), a lone surrogate (canonicalJson escapes it as JSON.stringify does;
  // canonicalize refuses it), NaN and the infinities (null; refused), toJSON (ignored; called).
  // An undefined property is left out by both, as JSON.stringify does.
  const text = fc.string({ unit: 'binary', maxLength: 12 });
  const { json } = fc.letrec<{ json: unknown }>((tie) => ({
    json: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.maxSafeInteger(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      text,
      fc.constantFrom('', 'é', 'e\u0301', '日本', '🎉', '\u2028', '"\\\n\u0000'),
      fc.array(tie('json'), { maxLength: 5 }),
      fc.dictionary(fc.oneof(text, fc.constantFrom('a', 'B', 'é', '🎉', '\uffff')), tie('json'), {
        maxKeys: 5,
      }),
    ),
  }));

  it('write the same text for every JSON value: objects, arrays, strings in any script, numbers', async () => {
    await fc.assert(
      fc.asyncProperty(json, async (value) => {
        expect(canonicalJson(value)).toBe(await rfc8785.canonicalize(value));
      }),
      { numRuns: 1000 },
    );
  });

  it('order keys by UTF-16 code units, as RFC 8785 does', async () => {
    const value = { '\u{1F389}': 1, '\uffff': 2, é: 3, a: 4, B: 5, '': 6 };
    expect(canonicalJson(value)).toBe('{"":6,"B":5,"a":4,"é":3,"🎉":1,"\uffff":2}');
    expect(canonicalJson(value)).toBe(await rfc8785.canonicalize(value));
  });
});

describe('entryDigest', () => {
  const raw = rawAdded(2, 'T-2', 2, 1250);

  it('is a SHA-256 in hex', () => {
    expect(digestOf(raw)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for the same content with other key order and whitespace', () => {
    const compact = JSON.stringify(raw);
    const reordered =
      '{ "data" : { "unitPrice": 1250, "quantity": 2, "sku": "SKU-T-2" },\n' +
      '  "type": "TransactionAdded", "sequence": 2,\t"orderId": "O-1", "transactionId": "T-2" }\n';
    expect(JSON.parse(reordered)).toEqual(raw);
    expect(digestOf(reordered)).toBe(digestOf(compact));
    expect(digestOf(Buffer.from(reordered))).toBe(digestOf(raw));
  });

  it('is the same whether final is false or absent', () => {
    expect(digestOf({ ...raw, final: false })).toBe(digestOf(raw));
  });

  it('ignores unknown fields, which the validated entry drops', () => {
    const noisy = { ...raw, comment: 'x', data: { ...(raw.data as Raw), colour: 'red' } };
    expect(digestOf(noisy)).toBe(digestOf(raw));
  });

  it('differs when any field of the content differs', () => {
    const variants: Raw[] = [
      { ...raw, transactionId: 'T-3' },
      { ...raw, orderId: 'O-2' },
      { ...raw, sequence: 3 },
      { ...raw, final: true },
      { ...raw, data: { sku: 'SKU-T-2', quantity: 3, unitPrice: 1250 } },
      { ...raw, data: { sku: 'SKU-T-2', quantity: 2, unitPrice: 1251 } },
      { ...raw, data: { sku: 'SKU-X', quantity: 2, unitPrice: 1250 } },
      rawAmended(2, 'T-2', 'T-1', { quantity: 2, unitPrice: 1250 }),
    ];
    const digests = new Set([raw, ...variants].map(digestOf));
    expect(digests.size).toBe(variants.length + 1);
  });

  it('tells the types apart even with the same ids and sequence', () => {
    const digests = new Set(
      [rawCreated(1, 'T-1'), rawDeleted(1, 'T-1'), rawAdded(1, 'T-1', 1, 1)].map(digestOf),
    );
    expect(digests.size).toBe(3);
  });

  it('is the same for an OrderDeleted with no data and with empty data', () => {
    expect(digestOf(rawDeleted(4, 'T-4'))).toBe(digestOf(rawDeleted(4, 'T-4', { data: {} })));
    expect(digestOf(rawDeleted(4, 'T-4', { data: { reason: 'r' } }))).not.toBe(
      digestOf(rawDeleted(4, 'T-4')),
    );
  });
});

describe('entryMessageId', () => {
  it('is the transactionId, a colon and the first 16 hex digits of the digest', () => {
    const digest = '0123456789abcdef' + 'f'.repeat(48);
    expect(entryMessageId('T-9', digest)).toBe('T-9:0123456789abcdef');
  });

  it('differs for a reused transactionId with other content', () => {
    const first = validateEntry(rawAdded(2, 'T-2', 2, 1250));
    const second = validateEntry(rawAdded(2, 'T-2', 3, 1250));
    if (!first.ok || !second.ok) throw new Error('expected valid entries');
    const firstId = entryMessageId('T-2', entryDigest(first.value));
    const secondId = entryMessageId('T-2', entryDigest(second.value));
    expect(firstId).toMatch(/^T-2:[0-9a-f]{16}$/);
    expect(secondId).toMatch(/^T-2:[0-9a-f]{16}$/);
    expect(firstId).not.toBe(secondId);
    expect(firstId).toBe(`T-2:${entryDigest(first.value).slice(0, 16)}`);
  });
});

describe('canonicalJson of every shape of validated entry', () => {
  const identifier = fc.string({ minLength: 1, maxLength: 12 });
  const base = fc.record({
    transactionId: identifier,
    orderId: identifier.filter((id) => !/[/\\?#]/.test(id)),
    sequence: fc.integer({ min: 1, max: 1_000_000 }),
    final: fc.boolean(),
  });
  const data = fc.oneof(
    fc.record({
      type: fc.constant('OrderCreated'),
      data: fc.record({ customerId: identifier, currency: fc.constantFrom('EUR', 'USD') }),
    }),
    fc.record({
      type: fc.constant('TransactionAdded'),
      data: fc.record({
        sku: identifier,
        quantity: fc.integer({ min: 1, max: 1e9 }),
        unitPrice: fc.integer({ min: 0, max: 1e9 }),
      }),
    }),
    fc.record({
      type: fc.constant('TransactionAmended'),
      data: fc.record(
        {
          targetTransactionId: identifier,
          quantity: fc.integer({ min: 1, max: 1e9 }),
          unitPrice: fc.integer({ min: 0, max: 1e9 }),
        },
        { requiredKeys: ['targetTransactionId'] },
      ),
    }),
    fc.record({
      type: fc.constant('OrderDeleted'),
      data: fc.record({ reason: fc.string() }, { requiredKeys: [] }),
    }),
  );

  it('is the text of RFC 8785, for every shape of entry', async () => {
    await fc.assert(
      fc.asyncProperty(base, data, async (b, d) => {
        const validated = validateEntry({ ...b, ...d });
        if (!validated.ok) return true; // e.g. an amendment with neither field: not an entry
        expect(canonicalJson(validated.value)).toBe(await rfc8785.canonicalize(validated.value));
        return true;
      }),
      { numRuns: 500 },
    );
  });
});

describe('canonicalJson on input nested deeper than the stack', () => {
  // A parked entry may nest as deep as its ledger message allows (an invalid entry is hashed for
  // its park id whole); on Node 22 a 4,000-deep one overflowed the recursive version.
  it('writes 100,000 levels without recursion, as JSON.stringify would with sorted keys', () => {
    let deep: unknown = { z: 1, a: [true, null, 'x'] };
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? { b: deep, a: i } : [deep, i];
    const text = canonicalJson(deep);
    expect(text.length).toBeGreaterThan(100_000);
    expect(text.startsWith('[{"a":99998,"b":[{"a":99996,"b":')).toBe(true);
    expect(text).toContain('{"a":[true,null,"x"],"z":1}');
    expect(canonicalJson({ b: [1, { d: 2, c: undefined }], a: 'q' })).toBe('{"a":"q","b":[1,{"d":2}]}');
    expect(canonicalJson([undefined, 1])).toBe(JSON.stringify([undefined, 1]).replace('null', ''));
  });
});

describe('canonicalJson on each shape of amendment', () => {
  it.each<[string, { quantity?: number; unitPrice?: number }]>([
    ['the quantity alone', { quantity: 3 }],
    ['the price alone', { unitPrice: 0 }],
    ['both', { quantity: 2, unitPrice: 99 }],
  ])('writes the RFC 8785 text for an amendment of %s', async (_case, change) => {
    const validated = validateEntry({
      transactionId: 'T-3',
      orderId: 'O-1',
      sequence: 3,
      type: 'TransactionAmended',
      data: { targetTransactionId: 'T-2', ...change },
    });
    if (!validated.ok) throw new Error(validated.problems.join('; '));
    expect(canonicalJson(validated.value)).toBe(await rfc8785.canonicalize(validated.value));
  });
});

describe('canonicalJson on a value that is not an object', () => {
  it('writes it as JSON.stringify does, nothing included for what JSON cannot hold', () => {
    for (const value of [null, 0, -1.5, 'text', true, false, undefined, () => 1, Symbol('s')]) {
      expect(canonicalJson(value)).toBe(JSON.stringify(value));
    }
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(undefined)).toBeUndefined();
  });
});

describe('sha256Hex', () => {
  it('is the SHA-256 of the UTF-8 text, in hex', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toBe(createHash('sha256').update('é', 'utf8').digest('hex'));
  });
});

describe('canonicalJson on an order deletion', () => {
  it.each<[string, Record<string, unknown>]>([
    ['no data', {}],
    ['empty data', { data: {} }],
    ['a reason', { data: { reason: 'duplicate' } }],
  ])('writes the RFC 8785 text for one with %s', async (_case, extra) => {
    const validated = validateEntry({ ...rawDeleted(4, 'T-4'), ...extra });
    if (!validated.ok) throw new Error(validated.problems.join('; '));
    expect(canonicalJson(validated.value)).toBe(await rfc8785.canonicalize(validated.value));
  });
});
