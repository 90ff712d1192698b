/** The `--input` file of `npm start`: one ledger message a line, each checked before the run. */
import { UsageError } from './flags';

export interface InputLine {
  messageId: string;
  sessionId: string;
  body: unknown;
}

/** One ledger message a line; a line that is not such an object stops the run, naming the line. */
export function parseInputFile(text: string, name: string): InputLine[] {
  const messages: InputLine[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `${name}:${index + 1}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
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
    messages.push({
      messageId: record.messageId,
      sessionId: (record.sessionId as string | undefined) ?? 'main',
      body: record.body,
    });
  });
  return messages;
}
