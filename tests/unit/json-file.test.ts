/** The report file is written in chunks (tools/cli/json-file.ts) that must join to JSON.stringify's text. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prettyJsonChunks, writeJsonFile } from '../../tools/cli/json-file';
import { added, created, FAST, ledger, runToEnd } from '../support/e2e';

const values: Array<[string, unknown]> = [
  ['an empty object', {}],
  ['empty arrays and objects as fields', { orders: [], parked: [], stats: {} }],
  [
    'arrays of objects, nested arrays, every scalar',
    {
      orders: [
        { id: 'O-1', lines: [{ q: 1 }, { q: 2 }], none: null },
        { id: 'O-2', lines: [] },
      ],
      mixed: [1, 'two', true, null, [3, [4]], { five: { six: 6 } }],
      text: 'line\nbreak "quoted" é😀',
      n: -0.5,
    },
  ],
  [
    'what JSON leaves out or turns to null',
    {
      gone: undefined,
      fn: () => 1,
      [Symbol('s')]: 1,
      holes: [undefined, () => 1, Symbol('t'), Number.NaN],
      when: new Date(0),
      after: 1,
    },
  ],
  ['only left-out fields', { gone: undefined }],
  ['an array at the top', [{ a: 1 }, 2]],
  ['a scalar', 'text'],
  ['null', null],
  ['an object with toJSON', { toJSON: () => ({ replaced: [1, 2] }) }],
];

describe('prettyJsonChunks', () => {
  test.each(values)('%s: joins to JSON.stringify(value, null, 2)', (_, value) => {
    expect([...prettyJsonChunks(value)].join('')).toBe(JSON.stringify(value, null, 2));
  });

  test('gives a non-empty top-level array out one element per chunk', () => {
    const chunks = [...prettyJsonChunks({ orders: [{ a: 1 }, { b: 2 }, { c: 3 }], stats: { n: 1 } })];
    expect(
      chunks.filter((chunk) => chunk.includes('"a"') || chunk.includes('"b"') || chunk.includes('"c"')),
    ).toHaveLength(3);
  });
});

describe('writeJsonFile', () => {
  test("writes a run's report exactly as JSON.stringify(report, null, 2) and a line break", async () => {
    const { report } = await runToEnd(
      [ledger('B-1', [created('O-1', 'T-1', 1), added('O-1', 'T-2', 2), { broken: true }])],
      FAST,
    );
    const dir = mkdtempSync(join(tmpdir(), 'json-file-'));
    try {
      const path = join(dir, 'report.json');
      writeJsonFile(path, report);
      expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(report, null, 2)}\n`);
      const big = {
        orders: Array.from({ length: 30_000 }, (_, i) => ({ orderId: `O-${i}`, pad: 'x'.repeat(40) })),
      };
      writeJsonFile(path, big);
      expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(big, null, 2)}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
