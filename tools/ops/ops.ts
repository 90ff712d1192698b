/**
 * `npm run ops -- <command>`: an operator's view of an app's parked and dead-lettered messages, their
 * replay one by one, in bulk and by order, their discard, and the session backlog, and `send` to feed
 * it a ledger file. With `--local URL` (an app `npm start -- --serve` serves) or `--url URL --key KEY`
 * (a deployed one) it goes through the app's HTTP API (./http-ops.ts), which alone has the bulk
 * commands; without, it talks to Azure through the SDK when the app's settings are in the environment.
 */
import { DefaultAzureCredential, type TokenCredential } from '@azure/identity';
import { createCosmosClient, createCosmosContainer } from '../../src/adapters/azure/cosmos-store';
import { queriedFieldsOf } from '../../src/adapters/indexing-policy';
import {
  connectServiceBus,
  createServiceBusOperations,
} from '../../src/adapters/azure/service-bus-operations';
import { createServiceBusSender } from '../../src/adapters/azure/service-bus-sender';
import { readSettings, SETTING } from '../../src/adapters/settings';
import { DEFAULT_MAX_MESSAGE_BYTES, parseMaxMessageBytes } from '../../src/services/message-size';
import type { DocumentContainer, MessageSender } from '../../src/services/ports';
import { ConfigurationError, errorMessage } from '../../src/domain/errors';
import { detailOf } from '../../src/services/operations/held-messages';
import type {
  DeadLetteredMessage,
  Listing,
  MessageOperations,
  ParkedMessage,
  QueueBacklog,
} from '../../src/services/operations/message-operations-port';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import {
  inspect,
  replayDeadLettered,
  replayParked,
  type ReplayDeps,
  type ReplayResult,
} from '../../src/services/operations/replay';
import { UsageError } from '../cli/flags';
import {
  isHttpOnly,
  overHttp,
  OPS_USAGE,
  parseOps,
  SEND_USAGE,
  type HttpOnlyCommand,
  type OpsCommand,
  type OpsRequest,
} from './ops-args';
import { runHttpCommand, type Fetch } from './http-ops';
import { checkLedgerFile, PartialSendError, sendLedgerFile, type SendReport } from './send';
import { upgradeOrderHeaders, type HeaderUpgrade } from './header-upgrade';
import { copyOrders } from './orders-copy';
import { textTable } from '../cli/text-table';
import { runMain } from '../cli/run-main';

type RunnableCommand = Exclude<OpsCommand, { name: 'help' }>;
type SendCommand = Extract<OpsCommand, { name: 'send' }>;
/** The commands that run through the SDK: all but send (./send.ts) and those only the app's HTTP API has. */
type SdkCommand = Exclude<RunnableCommand, SendCommand | HttpOnlyCommand>;

/** What the commands run on; `sender` and `maxMessageBytes` only for `send`. */
export interface OpsDeps extends Omit<ReplayDeps, 'operations'> {
  sender?: MessageSender;
  maxMessageBytes?: number;
  /** Another container of the app's database, by name (`orders copy`). */
  container?: (name: string) => DocumentContainer;
}

export interface OpsOutput {
  out(text: string): void;
  err(text: string): void;
}

export const processOutput: OpsOutput = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

const shortened = (text: string, max = 70): string =>
  text.length > max ? `${text.slice(0, max - 3)}...` : text;
const iso = (ms: number): string => new Date(ms).toISOString();
const json = (value: unknown): string => JSON.stringify(value, null, 2);

function truncationNote(truncated: boolean): string[] {
  return truncated ? ['(the listing stopped at its bound: there are more)'] : [];
}

function parkedTable(listing: Listing<ParkedMessage>): string {
  if (listing.messages.length === 0) return 'no parked messages';
  return [
    textTable([
      ['messageId', 'from', 'session', 'reason', 'parked at', 'description'],
      ...listing.messages.map((message) => [
        message.messageId,
        message.park.fromQueue ?? '?',
        message.park.fromSessionId ?? '-',
        message.park.reason,
        iso(message.enqueuedTimeUtc),
        shortened(message.park.description),
      ]),
    ]),
    `${listing.messages.length} parked`,
    ...truncationNote(listing.truncated),
  ].join('\n');
}

function deadLetterTable(queue: string, listing: Listing<DeadLetteredMessage>): string {
  if (listing.messages.length === 0) return `no dead-lettered messages in ${queue}`;
  return [
    textTable([
      ['messageId', 'session', 'deliveries', 'enqueued at', 'reason', 'description'],
      ...listing.messages.map((message) => [
        message.messageId,
        message.sessionId ?? '-',
        String(message.deliveryCount),
        iso(message.enqueuedTimeUtc),
        message.deadLetterReason ?? '-',
        shortened(message.deadLetterDescription ?? ''),
      ]),
    ]),
    `${listing.messages.length} dead-lettered in ${queue}`,
    ...truncationNote(listing.truncated),
  ].join('\n');
}

function backlogText(backlog: QueueBacklog): string {
  const counts = `${backlog.queue}: ${backlog.activeMessages} active, ${backlog.deadLetteredMessages} dead-lettered`;
  if (backlog.sessions.length === 0) return counts;
  return [
    counts,
    '',
    textTable([
      ['session', 'pending'],
      ...backlog.sessions.map((session) => [session.sessionId, String(session.pending)]),
    ]),
    ...truncationNote(backlog.truncated),
  ].join('\n');
}

function reportReplay(result: ReplayResult, asJson: boolean, output: OpsOutput): number {
  if (asJson) output.out(json(result));
  if (!result.replayed) {
    if (!asJson) output.err(`refused (${result.refusal}): ${result.reason}`);
    return 1;
  }
  if (!asJson) {
    output.out(
      `replayed ${result.messageId} into ${result.queue}` +
        (result.sessionId === null ? '' : ` (session ${result.sessionId})`) +
        (result.forced ? ', forced' : '') +
        `; expected: ${result.prediction.outcome}: ${result.prediction.description}`,
    );
  }
  return 0;
}

function upgradeText(upgrade: HeaderUpgrade): string {
  return [
    `moved ${upgrade.moved.length} order header${upgrade.moved.length === 1 ? '' : 's'} to "order"; ${upgrade.alreadyThere} there already`,
    ...upgrade.left.map(({ orderId, reason }) => `left ${orderId}: ${reason}`),
  ].join('\n');
}

function sendText(report: SendReport): string {
  return `sent ${report.sent} ledger message${report.sent === 1 ? '' : 's'} (${report.entries} entries) from ${report.file} to ${report.queue}`;
}

/**
 * `send`: the file checked whole, then sent. A refused file is a usage error (exit 2, one line naming
 * the line and field); a failed send is 1, saying how many went before it.
 */
async function executeSend(
  command: SendCommand,
  sender: MessageSender,
  maxMessageBytes: number,
  output: OpsOutput,
): Promise<number> {
  let report: SendReport;
  try {
    report = await sendLedgerFile(sender, command.file, maxMessageBytes);
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(error.message);
      return 2;
    }
    if (error instanceof PartialSendError) {
      output.err(
        `${error.message}; sending the file again is safe: each line keeps its messageId, and duplicate ` +
          'detection and the idempotent consumer drop what arrived already',
      );
      return 1;
    }
    throw error;
  }
  for (const warning of report.warnings) output.err(`warning: ${warning}`);
  output.out(command.json ? json(report) : sendText(report));
  return 0;
}

async function execute(
  command: SdkCommand,
  deps: ReplayDeps & Pick<OpsDeps, 'container'>,
  output: OpsOutput,
): Promise<number> {
  const { operations } = deps;
  switch (command.name) {
    case 'parked list': {
      const listing = await operations.listParked();
      output.out(command.json ? json(listing) : parkedTable(listing));
      return 0;
    }
    case 'parked show': {
      const message = await operations.findParked(command.messageId);
      if (message === undefined) {
        output.err(`no parked message ${command.messageId}`);
        return 1;
      }
      output.out(json({ ...detailOf(message), replay: (await inspect(deps, message)).replay }));
      return 0;
    }
    case 'parked replay':
      return reportReplay(
        await replayParked(deps, command.messageId, { force: command.force }),
        command.json,
        output,
      );
    case 'dlq list': {
      const listing = await operations.listDeadLettered(command.queue);
      output.out(command.json ? json(listing) : deadLetterTable(command.queue, listing));
      return 0;
    }
    case 'dlq show': {
      const message = await operations.findDeadLettered(command.queue, command.messageId);
      if (message === undefined) {
        output.err(`no dead-lettered message ${command.messageId} in ${command.queue}`);
        return 1;
      }
      output.out(json({ ...detailOf(message), replay: (await inspect(deps, message)).replay }));
      return 0;
    }
    case 'dlq replay':
      return reportReplay(
        await replayDeadLettered(deps, command.queue, command.messageId, { force: command.force }),
        command.json,
        output,
      );
    case 'sessions': {
      const backlog = await operations.backlog(command.queue);
      output.out(command.json ? json(backlog) : backlogText(backlog));
      return 0;
    }
    case 'headers upgrade': {
      const upgrade = await upgradeOrderHeaders(deps.orders);
      output.out(command.json ? json(upgrade) : upgradeText(upgrade));
      return upgrade.left.length === 0 ? 0 : 1;
    }
    case 'orders copy': {
      if (deps.container === undefined) {
        output.err('orders copy needs the Cosmos DB account: set the app settings as for headers upgrade');
        return 2;
      }
      const copy = await copyOrders(deps.container(command.source), deps.container(command.target));
      output.out(
        command.json
          ? json(copy)
          : [
              `copied ${copy.orders} orders, ${copy.documents} documents (${copy.gaps} gap documents) from ${command.source} to ${command.target}`,
              ...copy.left.map(({ orderId, id, reason }) => `left ${orderId}/${id}: ${reason}`),
            ].join('\n'),
      );
      return copy.left.length === 0 ? 0 : 1;
    }
  }
}

/** Help and usage errors are answered before anything runs: no setting or sign-in is needed for them. */
function parsed(argv: readonly string[], output: OpsOutput): OpsRequest | { code: number } {
  let request: OpsRequest;
  try {
    request = parseOps(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const hint = error.message.includes('--help') ? '' : ' (npm run ops -- --help lists the commands)';
    output.err(`${error.message}${hint}`);
    return { code: 2 };
  }
  const { command } = request;
  if (command.name !== 'help') return request;
  output.out(command.topic === 'send' ? SEND_USAGE : OPS_USAGE);
  return { code: 0 };
}

/** The whole command on any MessageOperations: the CLI runs it on Azure, the tests on the embedded broker. */
export async function runOpsCommand(
  operations: MessageOperations,
  deps: OpsDeps,
  argv: readonly string[],
  output: OpsOutput,
): Promise<number> {
  const request = parsed(argv, output);
  if ('code' in request) return request.code;
  if (overHttp(request)) {
    return runHttpCommand(request.command, request.target, jsonOf(request.command), output);
  }
  const { sender, maxMessageBytes, ...replayDeps } = deps;
  const command = request.command;
  // Help is answered above; the HTTP-only commands never reach here (parseOps refuses them).
  if (command.name === 'help' || isHttpOnly(command)) return 2;
  try {
    if (command.name === 'send') {
      if (sender === undefined) throw new Error('send needs a sender');
      return await executeSend(command, sender, maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, output);
    }
    return await execute(command, { ...replayDeps, operations }, output);
  } catch (error) {
    output.err(`failed: ${errorMessage(error)}`);
    return 1;
  }
}

export const NO_AZURE_SETTINGS =
  `nothing to operate on: set ${SETTING.serviceBusNamespace} and ${SETTING.cosmosEndpoint} ` +
  '(and sign in, e.g. `az login`) to operate on a deployed app, or give --url https://<app>.azurewebsites.net ' +
  '--key KEY; for the embedded runtime, run `npm start -- --serve` and give --local with the URL it prints.';

export const NO_SEND_NAMESPACE =
  `nowhere to send: set ${SETTING.serviceBusNamespace} to the deployed namespace ` +
  '(azd env get-value serviceBusFullyQualifiedNamespace) and sign in, e.g. `az login`';

/** A sender to the namespace, and what closes it; the CLI's is `@azure/service-bus` (tests pass another). */
export type SenderFactory = (
  fullyQualifiedNamespace: string,
  credential: TokenCredential,
) => MessageSender & { close(): Promise<void> };

/**
 * `send` needs only the namespace (and the size limit it checks by), not the Cosmos DB settings the
 * other commands read. The file is checked before the namespace is asked for: a bad file is refused
 * without any setting or sign-in.
 */
async function sendMain(
  command: SendCommand,
  env: Readonly<Record<string, string | undefined>>,
  output: OpsOutput,
  connect: SenderFactory,
): Promise<number> {
  const rawMax = env[SETTING.maxMessageBytes]?.trim();
  const max = rawMax ? parseMaxMessageBytes(rawMax) : { ok: true as const, value: DEFAULT_MAX_MESSAGE_BYTES };
  if (!max.ok) {
    output.err(`${SETTING.maxMessageBytes} ${max.problem}`);
    return 2;
  }
  try {
    checkLedgerFile(command.file, max.value);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.err(error.message);
    return 2;
  }
  const namespace = env[SETTING.serviceBusNamespace]?.trim();
  if (!namespace) {
    output.err(NO_SEND_NAMESPACE);
    return 2;
  }
  const clientId = env[SETTING.managedIdentityClientId]?.trim() || undefined;
  const sender = connect(namespace, new DefaultAzureCredential({ managedIdentityClientId: clientId }));
  try {
    return await executeSend(command, sender, max.value, output);
  } catch (error) {
    output.err(`failed: ${errorMessage(error)}`);
    return 1;
  } finally {
    await sender.close();
  }
}

/** Whether the command wants the app's answer as JSON. */
function jsonOf(command: OpsCommand): boolean {
  return 'json' in command && command.json;
}

export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  output: OpsOutput,
  connectSender: SenderFactory = createServiceBusSender,
  fetchApi: Fetch = fetch,
): Promise<number> {
  const request = parsed(argv, output);
  if ('code' in request) return request.code;
  // Over HTTP nothing of Azure's settings or sign-in is read: the app does the work.
  if (overHttp(request)) {
    return runHttpCommand(request.command, request.target, jsonOf(request.command), output, fetchApi);
  }
  if (request.command.name === 'send') return sendMain(request.command, env, output, connectSender);
  if (!env[SETTING.serviceBusNamespace]?.trim() && !env[SETTING.cosmosEndpoint]?.trim()) {
    output.err(NO_AZURE_SETTINGS);
    return 2;
  }
  let settings: ReturnType<typeof readSettings>;
  try {
    settings = readSettings(env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    output.err(error.message);
    return 2;
  }
  const credential = new DefaultAzureCredential({
    managedIdentityClientId: settings.managedIdentityClientId,
  });
  const operations = createServiceBusOperations(connectServiceBus(settings.serviceBusNamespace, credential), {
    duplicateDetectionWindowMs: settings.duplicateDetectionWindowMs,
  });
  const database = createCosmosClient({ endpoint: settings.cosmosEndpoint, credential }).database(
    settings.cosmosDatabase,
  );
  const container = (name: string): DocumentContainer =>
    createCosmosContainer(database.container(name), ORDERS_PARTITION_KEY_PATH, {
      queriedFields: queriedFieldsOf(ORDERS_CONTAINER),
    });
  const orders = container(ORDERS_CONTAINER);
  try {
    return await runOpsCommand(operations, { orders, container, now: Date.now }, argv, output);
  } finally {
    await operations.close();
  }
}

if (require.main === module) runMain(() => main(process.argv.slice(2), process.env, processOutput), 'ops');
