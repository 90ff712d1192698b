/** The `--input` file of `npm start`: one ledger message a line, each checked before the run. */
import { estimateMessageBytes, MAX_SERVICE_BUS_ID_LENGTH } from '../embedded/broker/broker';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../services/message-size';
import { UsageError } from './flags';

export interface InputLine {
  /** Where it came from, `file:line`, for a message that names it. */
  where: string;
  messageId: string;
  sessionId: string;
  body: unknown;
}

/** The entries a ledger message carries, as the app will read its body (JSON text included); 0 when none. */
export function entryCount(body: unknown): number {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body) as unknown;
    } catch {
      return 0;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 0;
  const entries = (value as { entries?: unknown }).entries;
  return Array.isArray(entries) ? entries.length : 0;
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

/** One ledger message a line; a line that is not such an object stops the run, naming the line. */
export function parseInputFile(
  text: string,
  name: string,
  maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
): InputLine[] {
  const messages: InputLine[] = [];
  // A byte-order mark opens many files saved on Windows; JSON allows none, so it is read past here.
  const content = text.startsWith('\ufeff') ? text.slice(1) : text;
  content.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `${name}:${index + 1}`;
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
    messages.push({ where, ...message });
  });
  return messages;
}

/**
 * Lines that reuse an earlier line's `messageId` with other content: the ledger queue's duplicate
 * detection (docs/messages.md) drops them without a word, so the loader says so. Exact repeats are not
 * named: dropping them loses nothing.
 */
export function reusedMessageIds(messages: readonly InputLine[]): string[] {
  const first = new Map<string, { where: string; content: string }>();
  const warnings: string[] = [];
  for (const message of messages) {
    const content = `${message.sessionId}\n${JSON.stringify(message.body)}`;
    const earlier = first.get(message.messageId);
    if (earlier === undefined) first.set(message.messageId, { where: message.where, content });
    else if (earlier.content !== content) {
      warnings.push(
        `${message.where}: messageId ${message.messageId} was already used at ${earlier.where} with other ` +
          "content; the broker's duplicate detection will drop this message: give a changed batch a new messageId",
      );
    }
  }
  return warnings;
}
