/**
 * `npm run ops -- send FILE` (tools/ops/send.ts): a ledger file checked with npm start's reader, then
 * sent to `ledger`, here on the embedded broker, whose app then runs it as Azure would.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import { createEmbeddedOperations } from '../../local/store/message-operations';
import { TransientError } from '../../src/domain/errors';
import type { MessageSender, OutgoingMessage } from '../../src/services/ports';
import { SEND_USAGE } from '../../tools/ops/ops-args';
import { main, NO_SEND_NAMESPACE, runOpsCommand, type SenderFactory } from '../../tools/ops/ops';
import { SEND_CHUNK } from '../../tools/ops/send';
import { quiet, SAMPLE_PATH } from '../support/e2e';
import { capturedOutput } from '../support/ops';

const SAMPLE = SAMPLE_PATH;

/** A sender that records each call and passes it on (to the embedded broker, or nowhere). */
function recording(
  next?: MessageSender,
): MessageSender & { calls: Array<{ queue: string; messages: OutgoingMessage[] }> } {
  const calls: Array<{ queue: string; messages: OutgoingMessage[] }> = [];
  return {
    calls,
    async send(queue, messages) {
      calls.push({ queue, messages: [...messages] });
      await next?.send(queue, messages);
    },
  };
}

let dir: string;
const apps: EmbeddedApp[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ops-send-'));
});
afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const app of apps.splice(0)) await app.stop();
});

function file(name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n'));
  return path;
}

function app(): EmbeddedApp {
  const created = createEmbeddedApp({ catalog: { 'SKU-1': 100, 'SKU-2': 50 }, log: quiet });
  apps.push(created);
  return created;
}

async function send(
  sender: MessageSender,
  argv: string[],
  maxMessageBytes?: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = capturedOutput();
  const world = app();
  const code = await runOpsCommand(
    createEmbeddedOperations(world.broker),
    { orders: world.orders, now: Date.now, sender, maxMessageBytes },
    argv,
    output,
  );
  return { code, stdout: output.stdout.join('\n'), stderr: output.stderr.join('\n') };
}

const line = (messageId: string, body: unknown, sessionId?: string): string =>
  JSON.stringify({ messageId, ...(sessionId === undefined ? {} : { sessionId }), body });

describe('npm run ops -- send', () => {
  it('sends the sample to ledger, and the app ends with the orders npm start gives', async () => {
    const viaOps = app();
    const sender = recording(viaOps.broker);
    const output = capturedOutput();
    const code = await runOpsCommand(
      createEmbeddedOperations(viaOps.broker),
      { orders: viaOps.orders, now: Date.now, sender },
      ['send', SAMPLE],
      output,
    );
    expect({ code, stderr: output.stderr }).toEqual({ code: 0, stderr: [] });
    expect(output.stdout).toEqual([`sent 9 ledger messages (33 entries) from ${SAMPLE} to ledger`]);

    // One message a line, in file order, with the line's messageId, sessionId and body.
    const lines = readFileSync(SAMPLE, 'utf8')
      .split('\n')
      .filter((text) => text.trim() !== '')
      .map((text) => JSON.parse(text) as { messageId: string; sessionId: string; body: unknown });
    expect(sender.calls.map((call) => call.queue)).toEqual(['ledger']);
    expect(sender.calls[0].messages).toEqual(
      lines.map(({ messageId, sessionId, body }) => ({ messageId, sessionId, body })),
    );

    const viaStart = app();
    await viaStart.sendLedger(lines);
    await Promise.all([viaOps.drain(), viaStart.drain()]);
    expect((await viaOps.report()).orders).toEqual((await viaStart.report()).orders);
    expect((await viaOps.report()).parked).toEqual((await viaStart.report()).parked);
  });

  it('prints the count as JSON, warns of an exact repeat it sends, and gives a line without sessionId to main', async () => {
    const path = file('repeat.ndjson', [
      line('B-1', { batchId: 'B-1', entries: [] }, 'S-1'),
      '',
      line('B-1', { batchId: 'B-1', entries: [] }),
    ]);
    const sender = recording();
    const result = await send(sender, ['send', path, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      file: path,
      queue: 'ledger',
      sent: 2,
      entries: 0,
      warnings: [expect.stringContaining(`${path}:3 repeats ${path}:1 exactly (messageId B-1)`)],
    });
    expect(result.stderr).toMatch(/^warning: .*duplicate detection drops it/);
    expect(sender.calls[0].messages.map((message) => message.sessionId)).toEqual(['S-1', 'main']);
  });

  it('refuses the whole file for one unusable line, naming the line and field, and sends nothing', async () => {
    const good = line('B-1', { batchId: 'B-1', entries: [] });
    const refusals: Array<[string[], string]> = [
      [[good, '{"sessionId": "main", "body": {}}'], ':2: messageId must be a non-empty string'],
      [[good, good.replace('"B-1"', '"B-2"'), 'not json'], ':3: not valid JSON'],
      [[line('B-1', {}, '')], ':1: sessionId must be a non-empty string when present'],
      [['{"messageId": "B-1"}'], ':1: body is missing'],
      [[line('x'.repeat(129), {})], ':1: messageId is 129 characters, over the broker'],
      [[line('B-big', { pad: 'x'.repeat(300_000) })], ':1: message B-big is about'],
      // Duplicate detection would drop it without a word: lost, though the send succeeds.
      [
        [good, line('B-2', {}), line('B-1', { batchId: 'B-1', entries: 'other' })],
        ':3: messageId B-1 was already used at',
      ],
    ];
    for (const [lines, problem] of refusals) {
      const sender = recording();
      const path = file('bad.ndjson', lines);
      const result = await send(sender, ['send', path]);
      expect([problem, result.code]).toEqual([problem, 2]);
      expect(result.stderr).toContain(`${path}${problem}`);
      expect(result.stderr.split('\n')).toHaveLength(1);
      expect(result.stdout).toBe('');
      expect(sender.calls).toEqual([]);
    }
    // The size limit is the setting's: the same line passes under Premium's.
    const big = file('big.ndjson', [line('B-big', { pad: 'x'.repeat(300_000) })]);
    await expect(send(recording(), ['send', big], 1_048_576)).resolves.toMatchObject({ code: 0 });

    const missing = join(dir, 'missing.ndjson');
    await expect(send(recording(), ['send', missing])).resolves.toEqual({
      code: 2,
      stdout: '',
      stderr: `cannot read ${missing}: ENOENT`,
    });
    await expect(send(recording(), ['send', dir])).resolves.toMatchObject({
      code: 2,
      stderr: `cannot read ${dir}: EISDIR`,
    });
  });

  it('hands the sender the lines a chunk at a time, and says how many went when it fails', async () => {
    const lines = Array.from({ length: SEND_CHUNK * 2 + 50 }, (_, index) =>
      line(`B-${index}`, { batchId: `B-${index}`, entries: [] }),
    );
    const path = file('many.ndjson', lines);
    const sender = recording();
    await expect(send(sender, ['send', path])).resolves.toMatchObject({ code: 0 });
    expect(sender.calls.map((call) => call.messages.length)).toEqual([SEND_CHUNK, SEND_CHUNK, 50]);

    let calls = 0;
    const failing: MessageSender = {
      async send() {
        calls += 1;
        if (calls === 2) throw new TransientError('bus-unavailable', 'sending to ledger failed: timeout');
      },
    };
    const result = await send(failing, ['send', path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `sending failed after ${SEND_CHUNK} of ${lines.length} ledger messages: sending to ledger failed: timeout; ` +
        'sending the file again is safe: each line keeps its messageId, and duplicate detection and the ' +
        'idempotent consumer drop what arrived already',
    );
  });

  it('answers its usage errors with 2 and one line, and send --help with its own help', async () => {
    const usage: Array<[string[], string]> = [
      [['send'], 'send needs a file: send <file>'],
      [['send', 'a', 'b'], 'unexpected argument "b"'],
      [['send', 'a', '--force'], '--force applies to a replay only'],
    ];
    for (const [argv, message] of usage) {
      const result = await send(recording(), argv);
      expect([argv, result.code]).toEqual([argv, 2]);
      expect(result.stderr).toContain(message);
      expect(result.stderr.split('\n')).toHaveLength(1);
    }
    for (const asked of [
      ['send', '--help'],
      ['send', '-h'],
      ['help', 'send'],
    ]) {
      await expect(send(recording(), asked)).resolves.toEqual({ code: 0, stdout: SEND_USAGE, stderr: '' });
    }
    expect(SEND_USAGE).toContain('usage: npm run ops -- send <file> [--json]');
    const general = await send(recording(), ['--help']);
    expect(general.stdout).toContain('send <file>');
  });
});

describe('npm run ops -- send, as the CLI runs it', () => {
  const NAMESPACE = { ServiceBusConnection__fullyQualifiedNamespace: 'sb-x.servicebus.windows.net' };

  function factory(sender: MessageSender): SenderFactory & { namespaces: string[]; closed: number } {
    const made = Object.assign(
      (namespace: string) => {
        made.namespaces.push(namespace);
        return {
          send: sender.send.bind(sender),
          close: async () => {
            made.closed += 1;
          },
        };
      },
      { namespaces: [] as string[], closed: 0 },
    );
    return made;
  }

  it('checks the file before it asks for the namespace, and needs no Cosmos DB setting', async () => {
    const bad = file('bad.ndjson', ['[]']);
    const refused = capturedOutput();
    await expect(main(['send', bad], {}, refused, factory(recording()))).resolves.toBe(2);
    expect(refused.stderr).toEqual([`${bad}:1: must be an object {"messageId", "sessionId", "body"}`]);

    const noNamespace = capturedOutput();
    await expect(main(['send', SAMPLE], {}, noNamespace, factory(recording()))).resolves.toBe(2);
    expect(noNamespace.stderr).toEqual([NO_SEND_NAMESPACE]);

    const badLimit = capturedOutput();
    await expect(
      main(
        ['send', SAMPLE],
        { ...NAMESPACE, SERVICE_BUS_MAX_MESSAGE_BYTES: 'lots' },
        badLimit,
        factory(recording()),
      ),
    ).resolves.toBe(2);
    expect(badLimit.stderr.join()).toMatch(/^SERVICE_BUS_MAX_MESSAGE_BYTES must be a whole number/);
  });

  it('sends through the sender it connects to the namespace, and closes it', async () => {
    const sender = recording();
    const connect = factory(sender);
    const output = capturedOutput();
    await expect(main(['send', SAMPLE, '--json'], NAMESPACE, output, connect)).resolves.toBe(0);
    expect(connect.namespaces).toEqual(['sb-x.servicebus.windows.net']);
    expect(connect.closed).toBe(1);
    expect(JSON.parse(output.stdout.join('\n'))).toMatchObject({ sent: 9, entries: 33, queue: 'ledger' });
    expect(sender.calls[0].messages).toHaveLength(9);

    const failing = factory({
      send: async () => {
        throw new TransientError('bus-unavailable', 'sending to ledger failed: Unauthorized');
      },
    });
    const failed = capturedOutput();
    await expect(main(['send', SAMPLE], NAMESPACE, failed, failing)).resolves.toBe(1);
    expect(failed.stderr.join()).toContain('sending failed after 0 of 9 ledger messages');
    expect(failing.closed).toBe(1);
  });
});
