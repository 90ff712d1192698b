/** `npm run ops` (tools/ops/ops.ts): the commands on the embedded broker, with captured output. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PermanentError } from '../../src/domain/errors';
import { main, NO_AZURE_SETTINGS, runOpsCommand } from '../../tools/ops/ops';
import { added, entryMessageFor, messageIdOf } from '../support/e2e';
import {
  moveClockPastDuplicateWindow,
  opsWorld,
  useOpsWorlds,
  parkedReasons,
  run,
  type OpsWorld,
  capturedOutput,
} from '../support/ops';

useOpsWorlds();

async function ops(
  w: OpsWorld,
  ...argv: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = capturedOutput();
  const code = await runOpsCommand(w.operations, { orders: w.app.orders, now: w.deps.now }, argv, output);
  return { code, stdout: output.stdout.join('\n'), stderr: output.stderr.join('\n') };
}

const misrouted = added('O-A', 'T-A2', 2);
const id = messageIdOf(misrouted);

describe('npm run ops', () => {
  it('lists, shows and replays parked messages, refusing what would park again unless forced', async () => {
    const world = opsWorld();
    await world.app.broker.send('order-transactions', [entryMessageFor(misrouted, 'O-B')]);
    await run(world, [
      { messageId: 'B-X', sessionId: 'main', body: { batchId: 'B-X', entries: 'not a batch' } },
    ]);

    const list = await ops(world, 'parked', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+order-transactions\\s+O-B\\s+misrouted`));
    expect(list.stdout).toMatch(/B-X\s+ledger\s+main\s+invalid/);
    expect(list.stdout).toContain('2 parked');
    const asJson = await ops(world, 'parked', 'list', '--json');
    expect((JSON.parse(asJson.stdout) as { messages: unknown[] }).messages).toHaveLength(2);

    const show = await ops(world, 'parked', 'show', 'B-X');
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({
      messageId: 'B-X',
      body: { batchId: 'B-X', entries: 'not a batch' },
      replay: { queue: 'ledger', sessionId: 'main', prediction: { outcome: 'parked', reason: 'invalid' } },
    });
    await expect(ops(world, 'parked', 'show', 'nope')).resolves.toMatchObject({ code: 1 });

    const refused = await ops(world, 'parked', 'replay', 'B-X');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refused (would-park-again)');
    expect(refused.stderr).toContain('entries must be an array');

    moveClockPastDuplicateWindow();
    const forced = await ops(world, 'parked', 'replay', id, '--force');
    expect(forced).toMatchObject({ code: 0, stderr: '' });
    expect(forced.stdout).toContain(`replayed ${id} into order-transactions (session O-B), forced`);
    await world.app.drain();
    // Parked again under the fresh id its replay travelled with.
    expect(await parkedReasons(world.operations)).toEqual({
      [`replay-p2:${id}`]: 'misrouted',
      'B-X': 'invalid',
    });
  });

  it('shows dead-letter queues and the session backlog', async () => {
    const world = opsWorld();
    await expect(ops(world, 'dlq', 'list', 'ledger')).resolves.toEqual({
      code: 0,
      stdout: 'no dead-lettered messages in ledger',
      stderr: '',
    });
    await expect(ops(world, 'dlq', 'replay', 'ledger', 'B-1')).resolves.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('refused (not-found)'),
    });
    await world.app.host.stop();
    await world.app.broker.send('order-transactions', [entryMessageFor(misrouted)]);
    const sessions = await ops(world, 'sessions', 'order-transactions');
    expect(sessions.code).toBe(0);
    expect(sessions.stdout).toContain('order-transactions: 1 active, 0 dead-lettered');
    expect(sessions.stdout).toMatch(/O-A\s+1/);
  });

  it('answers usage errors with 2 and the usage, help with 0', async () => {
    const world = opsWorld();
    const usage: Array<[string[], string]> = [
      [[], 'a command is required'],
      [['parked'], 'parked takes list, show or replay'],
      [['parked', 'replay'], 'a messageId is required'],
      [['parked', 'list', 'extra'], 'unexpected argument "extra"'],
      [['parked', 'list', '--force'], '--force applies to a replay only'],
      [['parked', 'list', '--verbose'], 'unknown flag --verbose'],
      [['parked', 'list', '--json', '--json'], '--json is given twice'],
      [['parked', 'replay', 'T-1', '--force=yes'], '--force takes no value'],
      [['dlq', 'list', 'bogus'], 'unknown queue "bogus"'],
      [['sessions'], 'a queue is required'],
      [['drain'], 'unknown command "drain"'],
    ];
    for (const [argv, message] of usage) {
      const result = await ops(world, ...argv);
      expect([argv, result.code]).toEqual([argv, 2]);
      expect(result.stderr).toContain(message);
      // One line, with where to look.
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain('npm run ops -- --help');
    }
    for (const asked of [['help'], ['--help'], ['-h']]) {
      const help = await ops(world, ...asked);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('parked replay <messageId> [--force]');
      expect(help.stdout).toMatch(/--json\s+\S.*\(default: a table\)/);
      expect(help.stdout).toMatch(/--force\s+\S.*\(default: off\)/);
      expect(help.stdout).toMatch(/--help\s+\S/);
    }
    // A messageId that starts with "-" is given after --.
    const show = await ops(world, 'parked', 'show', '--', '-odd-id');
    expect(show.stderr).not.toContain('unknown flag');
  });

  it('answers a failing operation with 1 and the reason', async () => {
    const world = opsWorld();
    const output = capturedOutput();
    const failing = {
      ...world.operations,
      listParked: async () => {
        throw new PermanentError('bus-error', 'peeking parked failed (Unauthorized)');
      },
    };
    const code = await runOpsCommand(failing, world.deps, ['parked', 'list'], output);
    expect(code).toBe(1);
    expect(output.stderr).toEqual(['failed: peeking parked failed (Unauthorized)']);
  });

  it('without Azure settings explains there is nothing to operate on; a half-set one is named', async () => {
    const none = capturedOutput();
    await expect(main(['parked', 'list'], {}, none)).resolves.toBe(2);
    expect(none.stderr).toEqual([NO_AZURE_SETTINGS]);

    const half = capturedOutput();
    await expect(
      main(
        ['parked', 'list'],
        { ServiceBusConnection__fullyQualifiedNamespace: 'ns.servicebus.windows.net' },
        half,
      ),
    ).resolves.toBe(2);
    expect(half.stderr.join()).toContain('CosmosDb__accountEndpoint');

    const usage = capturedOutput();
    await expect(main(['nope'], {}, usage)).resolves.toBe(2);
    expect(usage.stderr.join()).toContain('unknown command "nope"');
  });

  it('is the package script `ops`', () => {
    const manifest = JSON.parse(readFileSync(resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.ops).toBe('node dist/tools/ops/ops.js');
  });
});
