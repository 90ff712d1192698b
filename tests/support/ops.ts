/**
 * The embedded app with operations on its broker, and a clock the tests can move past the
 * brokers' duplicate detection window (10 minutes embedded, as a replay must wait for it on Azure).
 */
import { createEmbeddedApp, type EmbeddedApp, type EmbeddedAppOptions } from '../../local/app';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import type { MessageOperations, ParkedMessage } from '../../src/services/operations/message-operations-port';
import type { OperationsHttpDeps } from '../../src/functions/http/operations-http';
import {
  createOperationsJournal,
  OPERATIONS_CONTAINER,
  OPERATIONS_PARTITION_KEY_PATH,
} from '../../src/services/operations/operations-journal';
import { quiet } from './e2e';
import type { LedgerInput } from '../../local/app';
import { expectAccountAddsUp } from './account';
import type { OpsOutput } from '../../tools/ops/ops';

/**
 * Only `Date` is faked, moving with real time, so every timer and the host run as usual while a
 * test jumps the clock. Install it before the app is created: the broker keeps the `Date.now` it saw.
 */
export function fakeDateOnly(): void {
  jest.useFakeTimers({
    advanceTimers: true,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
}

/** Past the embedded duplicate detection window, well within the inbox markers' lifetime. */
export function moveClockPastDuplicateWindow(): void {
  jest.setSystemTime(Date.now() + 11 * 60_000);
}

export interface OpsWorld {
  app: EmbeddedApp;
  operations: MessageOperations;
  /** What the operations HTTP functions take, on the app's broker and store (its journal too). */
  deps: OperationsHttpDeps;
  /**
   * Entries the test means to leave dead-lettered after their outcome committed (expectAccountAddsUp's
   * `deadLetteredAfterOutcome`); every run and the test's end are checked against it.
   */
  twoOutcomes: number;
}

/** The worlds the current test opened, checked and stopped after it (`useOpsWorlds`). */
const openWorlds = new Set<OpsWorld>();

export function opsWorld(options: EmbeddedAppOptions = {}): OpsWorld {
  const app = createEmbeddedApp({ lockDurationMs: 50, timeScale: 1000, log: quiet, ...options });
  const operations = createEmbeddedOperations(app.broker);
  const world = {
    app,
    operations,
    deps: {
      operations,
      orders: app.orders,
      journal: createOperationsJournal(
        app.store.container(OPERATIONS_CONTAINER, OPERATIONS_PARTITION_KEY_PATH),
      ),
      now: () => Date.now(),
    },
    twoOutcomes: 0,
  };
  openWorlds.add(world);
  return world;
}

/**
 * The hooks of every test file that opens ops worlds: only `Date` is faked before each test, and
 * after it, whatever the test replayed, every entry of each world's ledger input is accounted for
 * once; then the worlds stop.
 */
export function useOpsWorlds(): void {
  beforeEach(fakeDateOnly);
  afterEach(async () => {
    try {
      for (const world of openWorlds) await expectWorldAccounted(world);
    } finally {
      for (const world of openWorlds) await world.app.stop();
      openWorlds.clear();
      jest.useRealTimers();
    }
  });
}

/** Sends the ledger input and drains; every entry of it is then accounted for once. */
export async function run(world: OpsWorld, inputs: readonly LedgerInput[]): Promise<void> {
  await world.app.sendLedger(inputs);
  await world.app.drain();
  expectAccountAddsUp(await world.app.report(), { deadLetteredAfterOutcome: world.twoOutcomes });
}

/** The end of an operations test: after whatever replays it did, the account still adds up. */
export async function expectWorldAccounted(world: OpsWorld | undefined): Promise<void> {
  if (world !== undefined)
    expectAccountAddsUp(await world.app.report(), { deadLetteredAfterOutcome: world.twoOutcomes });
}

/** Parked messages as `messageId → reason`, to compare whole. */
export async function parkedReasons(operations: MessageOperations): Promise<Record<string, string>> {
  const listing = await operations.listParked();
  return Object.fromEntries(
    listing.messages.map((message: ParkedMessage) => [message.messageId, message.park.reason]),
  );
}

/** An ops command's output, captured line by line. */
export interface CapturedOutput extends OpsOutput {
  stdout: string[];
  stderr: string[];
}

export function capturedOutput(): CapturedOutput {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (text) => stdout.push(text), err: (text) => stderr.push(text) };
}
