/** The command line of `npm run ops`: parsed into one command, or a usage error naming what is wrong. */
import { DEAD_LETTER_QUEUES, isDeadLetterQueue } from '../../src/services/operations/held-selection';
import {
  isOperableQueue,
  OPERABLE_QUEUES,
  type OperableQueue,
} from '../../src/services/operations/message-operations-port';
import {
  flagHelp,
  integerFlag,
  parseFlags,
  stringFlag,
  UsageError,
  type FlagSpec,
  type ParsedFlags,
} from '../cli/flags';

/** Which held messages a bulk command takes: the parked queue, or one queue's dead-letter sub-queue. */
export type HeldSourceArgument = { parked: true } | { dlq: DeadLetterQueue };

/** The queues whose dead-letter sub-queue a bulk command takes, as the operations API does. */
export type DeadLetterQueue = (typeof DEAD_LETTER_QUEUES)[number];

/** A bulk command's selection, as the operations API takes it (`from` and `to` ISO 8601). */
export interface HeldFilterArgument {
  reason?: string;
  from?: string;
  to?: string;
  orderId?: string;
}

/** The commands that run over the app's HTTP API (`--local URL`, `--url URL`). */
export type HttpCommand =
  | { name: 'parked list'; json: boolean }
  | { name: 'parked show'; messageId: string }
  | { name: 'parked replay'; messageId: string; force: boolean; json: boolean }
  | { name: 'dlq list'; queue: OperableQueue; json: boolean }
  | { name: 'dlq show'; queue: OperableQueue; messageId: string }
  | { name: 'dlq replay'; queue: OperableQueue; messageId: string; force: boolean; json: boolean }
  | { name: 'sessions'; queue: OperableQueue; json: boolean }
  | {
      name: 'replay';
      source: HeldSourceArgument;
      filter: HeldFilterArgument;
      dryRun: boolean;
      force: boolean;
      json: boolean;
    }
  | { name: 'replay-order'; orderId: string; dryRun: boolean; json: boolean }
  | {
      name: 'discard';
      source: HeldSourceArgument;
      filter: HeldFilterArgument;
      why: string;
      dryRun: boolean;
      json: boolean;
    }
  | { name: 'archive'; orderId: string; json: boolean }
  | { name: 'audit'; since: string | undefined; json: boolean };

export type OpsCommand =
  | { name: 'help'; topic?: 'send' }
  | { name: 'send'; file: string; json: boolean }
  | { name: 'headers upgrade'; json: boolean }
  | { name: 'orders copy'; source: string; target: string; json: boolean }
  | HttpCommand;

/** The commands only the app's HTTP API has: they need `--local URL` or `--url URL`. */
const HTTP_ONLY = ['replay', 'replay-order', 'discard', 'archive', 'audit'] as const;
export type HttpOnlyCommand = Extract<OpsCommand, { name: (typeof HTTP_ONLY)[number] }>;
/** The commands that talk to Azure's services themselves and have no HTTP twin. */
const SDK_ONLY = ['send', 'headers upgrade', 'orders copy'] as const;

export function isHttpOnly(command: OpsCommand): command is HttpOnlyCommand {
  return (HTTP_ONLY as readonly string[]).includes(command.name);
}

function isHttpCommand(command: OpsCommand): command is HttpCommand {
  return command.name !== 'help' && !(SDK_ONLY as readonly string[]).includes(command.name);
}

/** What the command line asks: a command, and where it runs (an HTTP command may run either way). */
export type OpsRequest =
  | { command: Exclude<OpsCommand, HttpOnlyCommand>; target: { kind: 'sdk' } }
  | { command: HttpCommand; target: HttpTarget };

export interface HttpTarget {
  kind: 'http';
  /** The app's root (`http://127.0.0.1:7071`); its `/api/` is taken as the same. */
  url: URL;
  /** A function key, sent as `x-functions-key`; none locally, where keys are not checked. */
  key: string | undefined;
  timeoutMs: number;
}

/** How long one request may take before the command gives up on the app. */
export const DEFAULT_HTTP_TIMEOUT_MS = 60_000;

const OPS_COMMANDS = `usage: npm run ops -- [--local URL | --url URL --key KEY] <command> [--json]

  send <file>                              send a ledger NDJSON file to the ledger queue (send --help)
  parked list                              parked messages, oldest first
  parked show <messageId>                  one parked message in full, and what a replay would do
  parked replay <messageId> [--force]      replay it into the queue and session it came from
  dlq list <queue>                         dead-lettered messages of a queue
  dlq show <queue> <messageId>             one dead-lettered message in full
  dlq replay <queue> <messageId> [--force] replay it into the queue it died in
  sessions <queue>                         active and dead-lettered counts, messages pending per session
  headers upgrade                          move order headers stored under their orderId to "order",
                                           with the app stopped (docs/documents.md, Upgrading)
  orders copy <source> <target>            copy the orders container <source> into <target>, created
                                           with the unique key /slot, the app stopped
                                           (docs/documents.md, Upgrading to the unique slot)

over the app's HTTP API only (--local URL, or --url URL --key KEY):
  replay (--parked | --dlq QUEUE) (--reason R | --from ISO --to ISO | --order ID) [--dry-run] [--force]
                                           replay the held messages the filter selects, one at a time
  replay-order <orderId> [--dry-run]       replay one order's held entries in sequence order
  discard (--parked | --dlq QUEUE) (--reason R | --from ISO --to ISO | --order ID) --why TEXT [--dry-run]
                                           remove the selected messages into the archive, with why
  archive <orderId>                        an order's discarded messages
  audit [--since ISO]                      who did what (the last day by default)`;

export const OPS_FLAGS: readonly FlagSpec[] = [
  {
    name: 'local',
    value: 'URL',
    meaning: 'operate on the app `npm start -- --serve` serves (the URL it prints); no key',
    default: 'Azure through the SDK',
  },
  {
    name: 'url',
    value: 'URL',
    meaning: 'operate on a deployed app over its HTTP API, https://<app>.azurewebsites.net',
    default: 'Azure through the SDK',
  },
  { name: 'key', value: 'KEY', meaning: "with --url: the app's admin key (function key for reads)" },
  { name: 'json', meaning: 'print JSON instead of a table', default: 'a table' },
  { name: 'force', meaning: 'replay even what would be parked again or have no effect', default: 'off' },
  { name: 'parked', meaning: 'replay, discard: the parked messages' },
  {
    name: 'dlq',
    value: 'QUEUE',
    meaning: `replay, discard: the dead letters of ${DEAD_LETTER_QUEUES.join(' or ')}`,
  },
  {
    name: 'reason',
    value: 'R',
    meaning: 'replay, discard: held for this reason (park or dead-letter reason)',
  },
  { name: 'from', value: 'ISO', meaning: 'replay, discard: held since this time (ISO 8601), inclusive' },
  { name: 'to', value: 'ISO', meaning: 'replay, discard: held until this time (ISO 8601), inclusive' },
  { name: 'order', value: 'ID', meaning: "replay, discard: this order's held messages" },
  { name: 'why', value: 'TEXT', meaning: 'discard: why, kept in the archive and the audit' },
  {
    name: 'dry-run',
    meaning: 'replay, replay-order, discard: list what would move, move nothing',
    default: 'off',
  },
  { name: 'since', value: 'ISO', meaning: 'audit: from this time', default: 'a day ago' },
  {
    name: 'timeout-ms',
    value: 'N',
    meaning: 'over HTTP: how long one request may take',
    default: String(DEFAULT_HTTP_TIMEOUT_MS),
  },
  { name: 'help', short: 'h', meaning: 'print this help and exit' },
];

export const OPS_USAGE = flagHelp(
  OPS_COMMANDS,
  OPS_FLAGS,
  `queues: ${OPERABLE_QUEUES.join(', ')}
A messageId that starts with "-" goes after --: parked show -- -odd-id.
A replay that would be parked again or have no effect is refused unless --force; one that the
queue's duplicate detection would drop, or a ledger entry still invalid, is refused even then.
--local and --url take the app's root or its /api/ (http://127.0.0.1:PORT as npm start -- --serve
prints it); each id travels percent-encoded in its path segment.
Exit codes: 0 done, 1 refused or failed (the reason is printed), 2 usage or configuration error;
over HTTP also 2 for an answer 4xx other than a refused replay (one line naming the problem), and
for an app that cannot be reached.`,
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

function dlqArgument(value: string): DeadLetterQueue {
  if (isDeadLetterQueue(value)) return value;
  throw new UsageError(`--dlq takes ${DEAD_LETTER_QUEUES.join(' or ')}, got ${JSON.stringify(value)}`);
}

/** An ISO 8601 time as the flag gave it (the app reads it again), or a usage error naming the flag. */
function isoFlag(parsed: ParsedFlags, name: string): string | undefined {
  const value = stringFlag(parsed, name);
  if (value !== undefined && Number.isNaN(Date.parse(value))) {
    throw new UsageError(
      `--${name} must be an ISO 8601 time such as 2026-01-31T09:00:00Z, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** `--parked` or `--dlq QUEUE`, exactly one. */
function sourceArgument(parsed: ParsedFlags, command: string): HeldSourceArgument {
  const dlq = stringFlag(parsed, 'dlq');
  const parked = parsed.values.has('parked');
  if (parked === (dlq !== undefined)) {
    throw new UsageError(`${command} takes --parked or --dlq QUEUE, one of them`);
  }
  return dlq === undefined ? { parked: true } : { dlq: dlqArgument(dlq) };
}

/** At least one of --reason, --from, --to, --order: a bulk command never takes everything unasked. */
function filterArgument(parsed: ParsedFlags, command: string): HeldFilterArgument {
  const reason = stringFlag(parsed, 'reason');
  const orderId = stringFlag(parsed, 'order');
  const from = isoFlag(parsed, 'from');
  const to = isoFlag(parsed, 'to');
  if (from !== undefined && to !== undefined && Date.parse(from) > Date.parse(to)) {
    throw new UsageError('--from must not be after --to');
  }
  const filter: HeldFilterArgument = {
    ...(reason === undefined ? {} : { reason }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(orderId === undefined ? {} : { orderId }),
  };
  if (Object.keys(filter).length === 0) {
    throw new UsageError(
      `${command} needs --reason R, --from ISO --to ISO or --order ID: it never takes everything unasked`,
    );
  }
  return filter;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Where the command runs: `--local URL` (no key), `--url URL [--key KEY]`, else Azure through the SDK. */
function targetArgument(parsed: ParsedFlags): OpsTarget {
  const local = stringFlag(parsed, 'local');
  const remote = stringFlag(parsed, 'url');
  const key = stringFlag(parsed, 'key');
  const timeout = stringFlag(parsed, 'timeout-ms');
  if (local !== undefined && remote !== undefined) throw new UsageError('give --local or --url, not both');
  if (key !== undefined && remote === undefined) {
    throw new UsageError(
      local === undefined ? '--key goes with --url' : '--key goes with --url: locally keys are not checked',
    );
  }
  const given = local ?? remote;
  if (given === undefined) {
    if (timeout !== undefined) throw new UsageError('--timeout-ms goes with --local or --url');
    return { kind: 'sdk' };
  }
  const flag = local === undefined ? '--url' : '--local';
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`${flag} must be a URL such as http://127.0.0.1:7071, got ${JSON.stringify(given)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be an http or https URL, got ${JSON.stringify(given)}`);
  }
  // A key is a credential: it goes over TLS, or to this machine only.
  if (key !== undefined && url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw new UsageError(`--key is sent over https only (or to this machine); ${url.origin} is plain http`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`${flag} takes the app's root URL, without a query, fragment or credentials`);
  }
  return {
    kind: 'http',
    url,
    key,
    timeoutMs: timeout === undefined ? DEFAULT_HTTP_TIMEOUT_MS : integerFlag('--timeout-ms', timeout, 1),
  };
}

/** The flags each command takes beyond --json, --help and the target's. */
const COMMAND_FLAGS: Partial<Record<OpsCommand['name'], readonly string[]>> = {
  'parked replay': ['force'],
  'dlq replay': ['force'],
  replay: ['parked', 'dlq', 'reason', 'from', 'to', 'order', 'dry-run', 'force'],
  'replay-order': ['dry-run'],
  discard: ['parked', 'dlq', 'reason', 'from', 'to', 'order', 'why', 'dry-run'],
  audit: ['since'],
};
const TARGET_FLAGS = ['local', 'url', 'key', 'timeout-ms', 'json', 'help'];

function checkFlags(parsed: ParsedFlags, command: OpsCommand): void {
  const allowed = new Set([...TARGET_FLAGS, ...(COMMAND_FLAGS[command.name] ?? [])]);
  for (const name of parsed.values.keys()) {
    if (allowed.has(name)) continue;
    if (name === 'force') throw new UsageError('--force applies to a replay only');
    throw new UsageError(`--${name} does not apply to ${command.name}`);
  }
}

function commandOf(parsed: ParsedFlags): OpsCommand {
  const words = parsed.positionals;
  const force = parsed.values.has('force');
  const json = parsed.values.has('json');
  const dryRun = parsed.values.has('dry-run');

  const [group, action, ...rest] = words;
  const expect = (count: number, command: OpsCommand): OpsCommand => {
    const extra = words.slice(count);
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
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
    case 'orders':
      if (action === 'copy') {
        const [source, target] = rest;
        if (!source || !target || source === target) {
          throw new UsageError(
            'orders copy needs two different container names: orders copy <source> <target>',
          );
        }
        return expect(4, { name: 'orders copy', source, target, json });
      }
      throw new UsageError(`orders takes copy, got ${JSON.stringify(action ?? '')}`);
    case 'send':
      if (action === undefined || action === '') throw new UsageError('send needs a file: send <file>');
      return expect(2, { name: 'send', file: action, json });
    case 'replay':
      return expect(1, {
        name: 'replay',
        source: sourceArgument(parsed, 'replay'),
        filter: filterArgument(parsed, 'replay'),
        dryRun,
        force,
        json,
      });
    case 'replay-order':
      if (action === undefined || action === '')
        throw new UsageError('replay-order needs an order id: replay-order <orderId>');
      return expect(2, { name: 'replay-order', orderId: action, dryRun, json });
    case 'discard': {
      const why = stringFlag(parsed, 'why');
      if (why === undefined || why.trim() === '') {
        throw new UsageError('discard needs --why TEXT: the archive and the audit keep why');
      }
      return expect(1, {
        name: 'discard',
        source: sourceArgument(parsed, 'discard'),
        filter: filterArgument(parsed, 'discard'),
        why,
        dryRun,
        json,
      });
    }
    case 'archive':
      if (action === undefined || action === '')
        throw new UsageError('archive needs an order id: archive <orderId>');
      return expect(2, { name: 'archive', orderId: action, json });
    case 'audit':
      return expect(1, { name: 'audit', since: isoFlag(parsed, 'since'), json });
    default:
      throw new UsageError(`unknown command ${JSON.stringify(group)}`);
  }
}

export function overHttp(request: OpsRequest): request is Extract<OpsRequest, { target: HttpTarget }> {
  return request.target.kind === 'http';
}

/** Where the commands run: through the SDK on Azure, or over the app's HTTP API. */
export type OpsTarget = { kind: 'sdk' } | HttpTarget;

/** The command and where it runs; a usage error names what is wrong. */
export function parseOps(argv: readonly string[]): OpsRequest {
  const parsed = parseFlags(OPS_FLAGS, argv, { command: 'npm run ops', allowPositionals: true });
  const words = parsed.positionals;
  if (parsed.values.has('help') || words[0] === 'help') {
    const topic = words[0] === 'help' ? words[1] : words[0];
    return {
      command: topic === 'send' ? { name: 'help', topic: 'send' } : { name: 'help' },
      target: { kind: 'sdk' },
    };
  }
  const command = commandOf(parsed);
  checkFlags(parsed, command);
  const target = targetArgument(parsed);
  if (target.kind === 'http') {
    if (isHttpCommand(command)) return { command, target };
    throw new UsageError(
      `${command.name} works on Azure through the SDK only (it has no HTTP twin): drop --local/--url`,
    );
  }
  if (isHttpOnly(command)) {
    throw new UsageError(
      `${command.name} runs in the app, over its HTTP API: give --local URL (npm start -- --serve prints it) ` +
        'or --url https://<app>.azurewebsites.net --key KEY',
    );
  }
  return { command, target };
}

export function parseOpsArgs(argv: readonly string[]): OpsCommand {
  return parseOps(argv).command;
}
