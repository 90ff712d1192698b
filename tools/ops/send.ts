/**
 * `npm run ops -- send FILE`: a ledger NDJSON file to the `ledger` queue of a deployed app, one Service
 * Bus message a line with its `messageId`, `sessionId` and body. The file is read and checked whole
 * first by the same reader and checks as `npm start --input` (local/cli/input-file.ts): one unusable
 * line refuses the file, naming the line and field, and nothing is sent.
 */
import { readInputFile, surveyInputFile, type InputSurvey } from '../../local/cli/input-file';
import { QUEUE } from '../../src/services/queues';
import type { MessageSender, OutgoingMessage } from '../../src/services/ports';

/** Lines handed to the sender at a time; it packs them into as few batches as the size limit allows. */
export const SEND_CHUNK = 100;

export interface SendReport {
  file: string;
  queue: string;
  /** Ledger messages sent: the file's non-blank lines. */
  sent: number;
  /** The entries they carry, as `npm start` counts them. */
  entries: number;
  /** Lines repeating an earlier line exactly (messageId and body): duplicate detection drops them. */
  warnings: string[];
}

/** Every line checked, nothing sent: throws a UsageError naming the first unusable line. */
export function checkLedgerFile(path: string, maxMessageBytes: number): InputSurvey {
  return surveyInputFile(path, path, maxMessageBytes, path);
}

/** Thrown when the sender fails part way: how many went before it. */
export class PartialSendError extends Error {
  constructor(
    readonly sent: number,
    readonly total: number,
    cause: unknown,
  ) {
    super(
      `sending failed after ${sent} of ${total} ledger messages: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/**
 * Checks the file, then sends it in file order, `SEND_CHUNK` lines a call. A line without `sessionId`
 * goes to session `main`, as `npm start` sends it (the ledger queue requires sessions).
 */
export async function sendLedgerFile(
  sender: MessageSender,
  path: string,
  maxMessageBytes: number,
): Promise<SendReport> {
  const survey = checkLedgerFile(path, maxMessageBytes);
  let sent = 0;
  let chunk: OutgoingMessage[] = [];
  const flush = async (): Promise<void> => {
    if (chunk.length === 0) return;
    try {
      await sender.send(QUEUE.ledger, chunk);
    } catch (error) {
      throw new PartialSendError(sent, survey.ledgerMessages, error);
    }
    sent += chunk.length;
    chunk = [];
  };
  for (const line of readInputFile(path, path, maxMessageBytes, path)) {
    chunk.push({ messageId: line.messageId, sessionId: line.sessionId, body: line.body });
    if (chunk.length >= SEND_CHUNK) await flush();
  }
  await flush();
  return { file: path, queue: QUEUE.ledger, sent, entries: survey.entries, warnings: survey.warnings };
}
