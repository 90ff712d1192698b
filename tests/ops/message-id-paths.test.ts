/**
 * A messageId in an operations URL cannot be altered or mixed with another: the Functions host (as
 * Kestrel) decodes a path but leaves `%2F` encoded, so a path segment cannot tell `L/1` from the
 * literal `L%2F1`. Such an id is refused in a path, and the query forms carry any id exactly.
 */
import { createEmbeddedApp, type EmbeddedApp } from '../../local/app';
import { FAST } from '../support/e2e';

let app: EmbeddedApp;
beforeAll(async () => {
  app = createEmbeddedApp(FAST);
  // Two ledger messages that are not ledger batches: each is parked whole under its own messageId.
  await app.sendLedger([
    { messageId: 'L/1', sessionId: 'main', body: { not: 'a batch', which: 'slash' } },
    { messageId: 'L%2F1', sessionId: 'main', body: { not: 'a batch', which: 'percent' } },
  ]);
  await app.drain();
});
afterAll(() => app.stop());

const call = async (method: string, path: string, body?: unknown) => {
  const response = await app.http({
    method,
    path,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (response.body === '' ? {} : JSON.parse(response.body)) as Record<string, unknown>,
  };
};

describe('a messageId that holds a slash, or the text %2F', () => {
  it('is never answered by another message through a path: the path form refuses what it cannot tell apart', async () => {
    for (const id of ['L/1', 'L%2F1']) {
      const shown = await call('GET', `ops/parked/${encodeURIComponent(id)}`);
      if (shown.status === 200) expect(shown.json.messageId).toBe(id);
      else
        expect(shown).toMatchObject({ status: 400, json: { error: expect.stringContaining('messageId=') } });
    }
    const replay = await call('POST', `ops/parked/${encodeURIComponent('L/1')}/replay`, {});
    expect(replay.status).toBe(400);
  });

  it('is shown and replayed exactly through the query forms', async () => {
    for (const [id, which] of [
      ['L/1', 'slash'],
      ['L%2F1', 'percent'],
    ] as const) {
      const shown = await call('GET', `ops/parked-message?messageId=${encodeURIComponent(id)}`);
      expect(shown.status).toBe(200);
      expect(shown.json).toMatchObject({ messageId: id, body: { which } });
    }
    const missing = await call('GET', 'ops/parked-message');
    expect(missing).toMatchObject({ status: 400, json: { error: expect.stringContaining('messageId') } });
    // Not a batch still: the replay's checks refuse it, for that message and no other.
    const replay = await call('POST', `ops/parked-message/replay?messageId=${encodeURIComponent('L/1')}`, {});
    expect(replay).toMatchObject({
      status: 409,
      json: { refusal: 'would-park-again', error: expect.stringMatching(/^replaying L\/1 would park it/) },
    });
  });
});
