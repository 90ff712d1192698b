/**
 * `npm start` reads its input file a chunk at a time (local/cli/input-file.ts), three times: to check
 * it, to send it and for the report's account. Each reading must see exactly the lines that reading
 * the whole text would, wherever a chunk ends.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entryCount, fileLines, readInputFile, surveyInputFile } from '../../local/cli/input-file';
import { UsageError } from '../../tools/cli/flags';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'input-file-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function fileOf(content: string | Buffer): string {
  files += 1;
  const path = join(dir, `input-${files}.ndjson`);
  writeFileSync(path, content);
  return path;
}

const line = (messageId: string, body: unknown, sessionId = 'main'): string =>
  JSON.stringify({ messageId, sessionId, body });

describe('fileLines', () => {
  const texts: Array<[string, string]> = [
    ['LF, ending with one', 'a\nb\n'],
    ['no final line break', 'a\nb'],
    ['CRLF, and a CR kept where no LF follows it', 'a\r\nb\rc\r\n\r\n'],
    ['a byte-order mark', '\ufeffa\nb'],
    ['multi-byte characters', 'é€\n😀x\n\nÿ'],
    ['empty', ''],
    ['only line breaks', '\n\n\r\n'],
  ];

  test.each(texts)('%s: the lines of the whole text split at LF, at every chunk size', (_, text) => {
    const path = fileOf(text);
    const expected = (text.startsWith('\ufeff') ? text.slice(1) : text).split(/\r?\n/);
    for (const chunkBytes of [1, 2, 3, 5, 1 << 20]) {
      expect([...fileLines(path, chunkBytes)]).toEqual(expected);
    }
  });

  test('a long line is read in one pass: 2 MB in 32-byte chunks, each searched once', () => {
    // Searching the whole pending line at every chunk took minutes here (and a 600 MB line ran out
    // of string length after that); the test's time limit is what fails it then.
    const long = 'x'.repeat(2 * 1024 * 1024);
    const path = fileOf(`a\n${long}\r\nb`);
    expect([...fileLines(path, 32)].map((text) => text.length)).toEqual([1, long.length, 1]);
  });

  test('a line longer than any message is one usage error naming the line, at any chunk size', () => {
    const path = fileOf('short\n' + 'y'.repeat(50) + '\nnot read');
    for (const chunkBytes of [7, 1 << 20]) {
      const lines = fileLines(path, chunkBytes, `--input ${path}`, 40);
      expect(lines.next().value).toBe('short');
      expect(() => lines.next()).toThrow(
        new UsageError(
          `--input ${path}: line 2 is longer than 40 characters; no message that long can travel`,
        ),
      );
    }
  });

  test('a file that cannot be read is one usage error naming it, a directory too', () => {
    const missing = join(dir, 'missing.ndjson');
    expect(() => [...fileLines(missing)]).toThrow(new UsageError(`cannot read --input ${missing}: ENOENT`));
    expect(() => [...fileLines(dir)]).toThrow(new UsageError(`cannot read --input ${dir}: EISDIR`));
  });
});

describe('readInputFile and surveyInputFile', () => {
  const content = [
    line('m1', { entries: [{ a: 1 }, { b: 2 }] }),
    '',
    line('m2', '{"entries": [1, 2, 3]}', 'S-2'),
    line('m1', { entries: [] }),
    line('m3', 'not json'),
    line('m1', { entries: [{ a: 1 }, { b: 2 }] }),
  ].join('\r\n');

  test('yields each line as a message named by its line number, a blank line skipped, a string body as it is', () => {
    const path = fileOf(content);
    expect([...readInputFile(path, 'in.ndjson')]).toEqual([
      { where: 'in.ndjson:1', messageId: 'm1', sessionId: 'main', body: { entries: [{ a: 1 }, { b: 2 }] } },
      { where: 'in.ndjson:3', messageId: 'm2', sessionId: 'S-2', body: '{"entries": [1, 2, 3]}' },
      { where: 'in.ndjson:4', messageId: 'm1', sessionId: 'main', body: { entries: [] } },
      { where: 'in.ndjson:5', messageId: 'm3', sessionId: 'main', body: 'not json' },
      { where: 'in.ndjson:6', messageId: 'm1', sessionId: 'main', body: { entries: [{ a: 1 }, { b: 2 }] } },
    ]);
  });

  test('the survey counts messages and entries, and warns of an exact repeat of a messageId', () => {
    const path = fileOf(
      content
        .split('\r\n')
        .filter((text) => !text.includes('"entries":[]'))
        .join('\n'),
    );
    expect(surveyInputFile(path, 'in.ndjson')).toEqual({
      ledgerMessages: 4,
      entries: 7,
      warnings: [
        "in.ndjson:5 repeats in.ndjson:1 exactly (messageId m1): the ledger queue's duplicate detection " +
          'drops it, and its entries count as duplicates',
      ],
    });
  });

  test('a messageId reused with another body is refused, naming both lines: duplicate detection would drop it', () => {
    const path = fileOf(content);
    expect(() => surveyInputFile(path, 'in.ndjson')).toThrow(
      new UsageError(
        'in.ndjson:4: messageId m1 was already used at in.ndjson:1 with another body; the ledger ' +
          "queue's duplicate detection would drop this message and its entries without a word: give a " +
          'changed batch a new messageId',
      ),
    );
    // The body alone counts, as for the broker: the same body on another session is an exact repeat.
    const otherSession = fileOf([line('m1', { entries: [] }), line('m1', { entries: [] }, 'S-9')].join('\n'));
    expect(surveyInputFile(otherSession, 'in.ndjson')).toMatchObject({
      ledgerMessages: 2,
      warnings: [expect.stringContaining('in.ndjson:2 repeats in.ndjson:1 exactly')],
    });
  });

  test('a bad line stops the reading with a usage error naming it', () => {
    const path = fileOf(`${line('m1', {})}\n{"messageId": "m2"}\n`);
    expect(() => surveyInputFile(path, 'in.ndjson')).toThrow(new UsageError('in.ndjson:2: body is missing'));
    const tooLong = fileOf(line('x'.repeat(129), {}));
    expect(() => surveyInputFile(tooLong, 'in.ndjson')).toThrow(/^in\.ndjson:1: messageId is 129 characters/);
  });
});

describe('entryCount', () => {
  test('counts the entries as the ledger processor reads the body: JSON text with a byte-order mark, own fields only', () => {
    expect(entryCount({ entries: [1, 2] })).toBe(2);
    expect(entryCount('\ufeff{"entries": [1, 2, 3]}')).toBe(3);
    expect(entryCount(Object.create({ entries: [1] }) as unknown)).toBe(0);
    expect(entryCount('not json')).toBe(0);
    expect(entryCount([1, 2])).toBe(0);
  });
});
