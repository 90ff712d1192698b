/** The `--input` file of `npm start`: one ledger message a line, each checked before the run. */
import { closeSync, openSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { estimateMessageBytes, MAX_SERVICE_BUS_ID_LENGTH } from '../broker/broker';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/services/message-size';
import { entriesOf } from '../entry-account';
import { UsageError } from '../../tools/cli/flags';

export interface InputLine {
  /** Where it came from, `file:line`, for a message that names it. */
  where: string;
  messageId: string;
  sessionId: string;
  body: unknown;
}

/**
 * The entries a ledger message carries, counted as the report's account counts them (the progress
 * line's total is that account's `entries`); 0 when none.
 */
export function entryCount(body: unknown): number {
  return entriesOf(body)?.length ?? 0;
}

/**
 * What the broker would refuse, found before the run with the broker's own measures: an id over
 * Service Bus's length, or a message over the size it accepts (the same estimate and limit it sends with).
 */
function checkBrokerLimits(where: string, line: Omit<InputLine, 'where'>, maxMessageBytes: number): void {
  for (const field of ['messageId', 'sessionId'] as const) {
    const length = line[field].length;
    if (length > MAX_SERVICE_BUS_ID_LENGTH) {
      throw new UsageError(
        `${where}: ${field} is ${length} characters, over the broker's limit of ${MAX_SERVICE_BUS_ID_LENGTH}`,
      );
    }
  }
  const bytes = estimateMessageBytes(line);
  if (bytes > maxMessageBytes) {
    throw new UsageError(
      `${where}: message ${line.messageId} is about ${bytes} bytes, over the broker's ` +
        `${maxMessageBytes}-byte limit per message; split its entries over several ledger messages`,
    );
  }
}

/**
 * One line of the file as a ledger message; undefined for a blank line. A line that is not such an
 * object stops the run, naming the line.
 */
export function parseInputLine(line: string, where: string, maxMessageBytes: number): InputLine | undefined {
  if (line.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    if ((error as Error).name === 'RangeError')
      throw new UsageError(`${where}: nested too deeply to read as JSON`);
    throw new UsageError(`${where}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${where}: must be an object {"messageId", "sessionId", "body"}`);
  }
  const record = parsed as Record<string, unknown>;
  if (typeof record.messageId !== 'string' || record.messageId === '') {
    throw new UsageError(`${where}: messageId must be a non-empty string`);
  }
  if (record.sessionId !== undefined && (typeof record.sessionId !== 'string' || record.sessionId === '')) {
    throw new UsageError(`${where}: sessionId must be a non-empty string when present`);
  }
  if (!Object.hasOwn(record, 'body')) throw new UsageError(`${where}: body is missing`);
  const message = {
    messageId: record.messageId,
    sessionId: (record.sessionId as string | undefined) ?? 'main',
    body: record.body,
  };
  checkBrokerLimits(where, message, maxMessageBytes);
  return { where, ...message };
}

// A byte-order mark opens many files saved on Windows; JSON allows none, so it is read past here.
const withoutBom = (text: string): string => (text.startsWith('\ufeff') ? text.slice(1) : text);

const READ_CHUNK_BYTES = 1 << 20;

/**
 * The longest line read, in UTF-16 units: twice the largest message Service Bus takes (100 MB on
 * Premium), well inside V8's longest string. A longer line could never travel, and is refused.
 */
export const MAX_LINE_LENGTH = 200 * 1024 * 1024;

/**
 * The file's lines, read a chunk at a time so that a large input is never held whole: split as
 * `split(/\r?\n/)` splits a whole text (at LF, a CR before it dropped), UTF-8 decoded across chunk ends.
 * Each chunk is searched once, so a long line costs its length, not its length times its chunks.
 */
export function* fileLines(
  path: string,
  chunkBytes: number = READ_CHUNK_BYTES,
  what: string = `--input ${path}`,
  maxLineLength: number = MAX_LINE_LENGTH,
): Generator<string> {
  const refused = (error: unknown): UsageError =>
    new UsageError(`cannot read ${what}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw refused(error);
  }
  try {
    const decoder = new StringDecoder('utf8');
    const chunk = Buffer.alloc(chunkBytes);
    /** The current line's text from earlier chunks, joined once its end is found. */
    let pieces: string[] = [];
    let piecesLength = 0;
    let lineNumber = 0;
    let first = true;
    /** The line that ends with `tail`; one that ends at a LF loses a CR before it. */
    const line = (tail: string, atNewline: boolean): string => {
      const text = pieces.length === 0 ? tail : pieces.join('') + tail;
      pieces = [];
      piecesLength = 0;
      lineNumber += 1;
      return atNewline && text.endsWith('\r') ? text.slice(0, -1) : text;
    };
    const tooLong = (): UsageError =>
      new UsageError(
        `${what}: line ${lineNumber + 1} is longer than ${maxLineLength} characters; no message that long can travel`,
      );
    for (;;) {
      let read: number;
      try {
        read = readSync(fd, chunk, 0, chunk.length, null);
      } catch (error) {
        // A directory opens, and refuses only its first read (EISDIR).
        throw refused(error);
      }
      let text = read === 0 ? decoder.end() : decoder.write(chunk.subarray(0, read));
      if (first && text.length > 0) {
        text = withoutBom(text);
        first = false;
      }
      let from = 0;
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', from)) {
        if (piecesLength + at - from > maxLineLength) throw tooLong();
        yield line(text.slice(from, at), true);
        from = at + 1;
      }
      const rest = text.slice(from);
      if (piecesLength + rest.length > maxLineLength) throw tooLong();
      if (rest.length > 0) {
        pieces.push(rest);
        piecesLength += rest.length;
      }
      if (read === 0) break;
    }
    yield line('', false);
  } finally {
    closeSync(fd);
  }
}

/**
 * The file's ledger messages, one at a time, each checked by `parseInputLine`. `what` names the file
 * when it cannot be read (`npm run ops -- send` has no `--input`).
 */
export function* readInputFile(
  path: string,
  name: string = path,
  maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
  what?: string,
): Generator<InputLine> {
  let number = 0;
  for (const line of fileLines(path, READ_CHUNK_BYTES, what)) {
    number += 1;
    const message = parseInputLine(line, `${name}:${number}`, maxMessageBytes);
    if (message !== undefined) yield message;
  }
}

/**
 * A line that reuses an earlier line's `messageId` with another body: the `ledger` queue's duplicate
 * detection would drop it without a word (it compares messageIds alone, within its window: Microsoft
 * Learn, "Duplicate detection", https://learn.microsoft.com/azure/service-bus-messaging/duplicate-detection),
 * and its entries with it, which no account could then call applied, duplicate, parked, buffered or
 * dead-lettered. So it is refused, naming both lines, before anything is sent. An exact repeat (the
 * same body, a producer's retry) loses nothing: it is sent, with a warning that the broker drops it.
 */
export function messageIdReuse(): (message: InputLine) => string | undefined {
  // Each first use is remembered by its body's SHA-256, not the body: the check reads a large input
  // one line at a time and must not keep it.
  const first = new Map<string, { where: string; body: string }>();
  return (message) => {
    const body = createHash('sha256').update(JSON.stringify(message.body)).digest('base64');
    const earlier = first.get(message.messageId);
    if (earlier === undefined) {
      first.set(message.messageId, { where: message.where, body });
      return undefined;
    }
    if (earlier.body !== body) {
      throw new UsageError(
        `${message.where}: messageId ${message.messageId} was already used at ${earlier.where} with another body; ` +
          "the ledger queue's duplicate detection would drop this message and its entries without a word: " +
          'give a changed batch a new messageId',
      );
    }
    return (
      `${message.where} repeats ${earlier.where} exactly (messageId ${message.messageId}): the ledger queue's ` +
      'duplicate detection drops it, and its entries count as duplicates'
    );
  };
}

/** What the run says before it starts: every line checked, with the warnings and counts it prints. */
export interface InputSurvey {
  ledgerMessages: number;
  entries: number;
  warnings: string[];
}

/** One pass over the file that checks every line, keeping none of them. */
export function surveyInputFile(
  path: string,
  name: string,
  maxMessageBytes?: number,
  what?: string,
): InputSurvey {
  const check = messageIdReuse();
  const survey: InputSurvey = { ledgerMessages: 0, entries: 0, warnings: [] };
  for (const message of readInputFile(path, name, maxMessageBytes, what)) {
    const warning = check(message);
    if (warning !== undefined) survey.warnings.push(warning);
    survey.ledgerMessages += 1;
    survey.entries += entryCount(message.body);
  }
  return survey;
}
