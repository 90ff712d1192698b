/** The command line of `npm run ops`: parsed into one command, or a usage error naming what is wrong. */
import {
  isOperableQueue,
  OPERABLE_QUEUES,
  type OperableQueue,
} from '../../src/services/operations/message-operations-port';
import { flagHelp, parseFlags, UsageError, type FlagSpec } from '../cli/flags';

export type OpsCommand =
  | { name: 'help'; topic?: 'send' }
  | { name: 'send'; file: string; json: boolean }
  | { name: 'parked list'; json: boolean }
  | { name: 'parked show'; messageId: string }
  | { name: 'parked replay'; messageId: string; force: boolean; json: boolean }
  | { name: 'dlq list'; queue: OperableQueue; json: boolean }
  | { name: 'dlq show'; queue: OperableQueue; messageId: string }
  | { name: 'dlq replay'; queue: OperableQueue; messageId: string; force: boolean; json: boolean }
  | { name: 'sessions'; queue: OperableQueue; json: boolean }
  | { name: 'headers upgrade'; json: boolean };

const OPS_COMMANDS = `usage: npm run ops -- <command> [--json]

  send <file>                              send a ledger NDJSON file to the ledger queue (send --help)
  parked list                              parked messages, oldest first
  parked show <messageId>                  one parked message in full, and what a replay would do
  parked replay <messageId> [--force]      replay it into the queue and session it came from
  dlq list <queue>                         dead-lettered messages of a queue
  dlq show <queue> <messageId>             one dead-lettered message in full
  dlq replay <queue> <messageId> [--force] replay it into the queue it died in
  sessions <queue>                         active and dead-lettered counts, messages pending per session
  headers upgrade                          move order headers stored under their orderId to "order",
                                           with the app stopped (docs/documents.md, Upgrading)`;

export const OPS_FLAGS: readonly FlagSpec[] = [
  { name: 'json', meaning: 'print JSON instead of a table', default: 'a table' },
  { name: 'force', meaning: 'replay even what would be parked again or have no effect', default: 'off' },
  { name: 'help', short: 'h', meaning: 'print this help and exit' },
];

export const OPS_USAGE = flagHelp(
  OPS_COMMANDS,
  OPS_FLAGS,
  `queues: ${OPERABLE_QUEUES.join(', ')}
A messageId that starts with "-" goes after --: parked show -- -odd-id.
A replay that would be parked again or have no effect is refused unless --force; one that the
queue's duplicate detection would drop, or a ledger entry still invalid, is refused even then.
Exit codes: 0 done, 1 refused or failed (the reason is printed), 2 usage or configuration error.`,
);

export const SEND_USAGE = `usage: npm run ops -- send <file> [--json]

Sends a ledger file to the deployed app's ledger queue: one Service Bus message a line, with the
line's messageId, sessionId (main when absent, as npm start sends it) and body.

The file is checked whole first, with npm start's reader and checks: each line a JSON object with a
non-empty messageId, sessionId a non-empty string when present, a body; ids of at most 128 characters;
each message within SERVICE_BUS_MAX_MESSAGE_BYTES (default 262144, Standard). One unusable line
refuses the file, naming the line and field, and nothing is sent; so does a line reusing an earlier
line's messageId with another body, which duplicate detection would drop without a word. A line
repeating an earlier one exactly is sent, and warned about: duplicate detection drops it.

Settings, from the environment: ServiceBusConnection__fullyQualifiedNamespace (required),
SERVICE_BUS_MAX_MESSAGE_BYTES, AZURE_CLIENT_ID; sign-in with DefaultAzureCredential (e.g. az login),
as one with Azure Service Bus Data Sender on the ledger queue (azd grants it to the deploying user).

  --json  print the count as JSON (file, queue, sent, entries, warnings)

Each line keeps its messageId, so sending a file again is safe: the queue's duplicate detection and
the idempotent consumer drop what arrived already.
Exit codes: 0 sent, 1 sending failed (how many were sent before is printed), 2 usage, configuration
or file error.`;

function queueArgument(value: string | undefined): OperableQueue {
  if (value === undefined) throw new UsageError(`a queue is required: one of ${OPERABLE_QUEUES.join(', ')}`);
  if (!isOperableQueue(value)) {
    throw new UsageError(`unknown queue ${JSON.stringify(value)}: one of ${OPERABLE_QUEUES.join(', ')}`);
  }
  return value;
}

function messageIdArgument(value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError('a messageId is required');
  return value;
}

export function parseOpsArgs(argv: readonly string[]): OpsCommand {
  const parsed = parseFlags(OPS_FLAGS, argv, { command: 'npm run ops', allowPositionals: true });
  const words = parsed.positionals;
  if (parsed.values.has('help') || words[0] === 'help') {
    return (words[0] === 'help' ? words[1] : words[0]) === 'send'
      ? { name: 'help', topic: 'send' }
      : { name: 'help' };
  }
  const force = parsed.values.has('force');
  const json = parsed.values.has('json');

  const [group, action, ...rest] = words;
  const expect = (count: number, command: OpsCommand): OpsCommand => {
    const extra = words.slice(count);
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
    if (force && !command.name.endsWith('replay')) throw new UsageError('--force applies to a replay only');
    return command;
  };

  switch (group) {
    case undefined:
      throw new UsageError('a command is required');
    case 'parked':
      if (action === 'list') return expect(2, { name: 'parked list', json });
      if (action === 'show') return expect(3, { name: 'parked show', messageId: messageIdArgument(rest[0]) });
      if (action === 'replay') {
        return expect(3, { name: 'parked replay', messageId: messageIdArgument(rest[0]), force, json });
      }
      throw new UsageError(`parked takes list, show or replay, got ${JSON.stringify(action ?? '')}`);
    case 'dlq':
      if (action === 'list') return expect(3, { name: 'dlq list', queue: queueArgument(rest[0]), json });
      if (action === 'show') {
        return expect(4, {
          name: 'dlq show',
          queue: queueArgument(rest[0]),
          messageId: messageIdArgument(rest[1]),
        });
      }
      if (action === 'replay') {
        return expect(4, {
          name: 'dlq replay',
          queue: queueArgument(rest[0]),
          messageId: messageIdArgument(rest[1]),
          force,
          json,
        });
      }
      throw new UsageError(`dlq takes list, show or replay, got ${JSON.stringify(action ?? '')}`);
    case 'sessions':
      return expect(2, { name: 'sessions', queue: queueArgument(action), json });
    case 'headers':
      if (action === 'upgrade') return expect(2, { name: 'headers upgrade', json });
      throw new UsageError(`headers takes upgrade, got ${JSON.stringify(action ?? '')}`);
    case 'send':
      if (action === undefined || action === '') throw new UsageError('send needs a file: send <file>');
      return expect(2, { name: 'send', file: action, json });
    default:
      throw new UsageError(`unknown command ${JSON.stringify(group)}`);
  }
}
