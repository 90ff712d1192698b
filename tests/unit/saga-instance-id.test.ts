/**
 * The saga's instance ids (docs/saga.md, "Instance ids"): one per order id, whatever it holds, and
 * one the durable client's URL and the Durable extension's parsing leave as it is. The way there is
 * modelled with the real URL parser (what durable-functions' DurableClient does with an id:
 * `new URL("instances/" + id, rpcBaseUrl)`) and the embedded management API's reading of a path as
 * Kestrel and the extension's handler read it (local/host/http-function.ts,
 * local/durable/management-api.ts).
 */
import fc from 'fast-check';
import { HASHED_ORDER_ID, fulfillmentInstanceId, orderIdInInstanceId } from '../../src/domain/saga';
import { orderIdProblem } from '../../src/domain/entry';
import { cancellationInstanceId } from '../../src/services/fulfillment/starter';
import { kestrelRequestPath } from '../../local/host/http-function';
import {
  MAX_INSTANCE_ID_LENGTH,
  instanceIdProblem,
  webUtilityUrlDecode,
} from '../../local/durable/management-api';

const RPC_BASE = 'http://127.0.0.1:17071/durabletask/';

/**
 * The instance id the extension reads from the URL the client builds for `id`, or null when that
 * URL is refused (400) or routes elsewhere. `route` is the client's path with `{id}` for the id.
 * An id holding a control character arrives, and the extension refuses it (`instanceIdProblem`).
 */
function arrivesAs(id: string, route: string): string | null {
  const url = new URL(route.replace('{id}', id), RPC_BASE);
  const kestrel = kestrelRequestPath(url.pathname);
  if (!kestrel.ok) return null;
  const path = webUtilityUrlDecode(kestrel.path)
    .slice(new URL(RPC_BASE).pathname.length)
    .replace(/^\/+|\/+$/g, '');
  const segments = path.split('/').filter((segment) => segment !== '');
  const at = route.split('/').indexOf('{id}');
  return segments.length === route.split('/').length ? (segments[at] ?? null) : null;
}

/** The durable client's routes that carry an instance id (getStatus, raiseEvent, start, purge). */
const ROUTES = ['instances/{id}', 'instances/{id}/raiseEvent/cancel', 'orchestrators/fulfillOrder/{id}'];

/** Characters the URL, Kestrel or the extension change, and their look-alikes. */
const TRICKY = [
  '%',
  '%2',
  '%41',
  '%25',
  '%2F',
  '%00',
  '+',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\ud800',
  '\udc00',
  '\ud801',
  '\ufffd',
  '\ud83d\ude00',
  'é',
  'A',
  'a',
  '-',
  '.',
  '..',
  '~',
  '_',
  '@',
  HASHED_ORDER_ID,
  '0',
  'f',
];
/** Any UTF-16 code unit, lone surrogates included, or one of the tricky pieces. */
const unit = fc.oneof(
  fc.constantFrom(...TRICKY),
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
);
const anyOrderId = fc.string({ unit, minLength: 1, maxLength: 30 }).filter((id) => id.length <= 100);
const SAFE = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~'];
const plainOrderId = fc
  .string({ unit: fc.constantFrom(...SAFE), minLength: 1, maxLength: 100 })
  .filter((id) => !id.startsWith(HASHED_ORDER_ID));

/** Ids that a URL, Kestrel or the extension would make equal to one another, and their neighbours. */
function lookAlikes(id: string): string[] {
  return [
    id,
    `${id} `,
    `${id}\t`,
    `\t${id}`,
    `${id}\n`,
    `${id}\r`,
    `${id}\u0000`,
    `${id}\ud800`,
    `${id}\ud801`,
    `${id}\ufffd`,
    `${id}A`,
    `${id}%41`,
    `${id}%2541`,
    `${id}+`,
    `${id}%2B`,
    `${id}%20`,
    `${id}%`,
    `${id}%25`,
    `${HASHED_ORDER_ID}${id}`,
  ];
}

describe('saga instance ids', () => {
  it('keep fulfill-<orderId> and cancel-<orderId> for a plain order id, as before', () => {
    expect(fulfillmentInstanceId('O-17')).toBe('fulfill-O-17');
    expect(cancellationInstanceId('O-17')).toBe('cancel-O-17');
    fc.assert(
      fc.property(plainOrderId, (orderId) => {
        expect(fulfillmentInstanceId(orderId)).toBe(`fulfill-${orderId}`);
        expect(cancellationInstanceId(orderId)).toBe(`cancel-${orderId}`);
      }),
      { numRuns: 300 },
    );
  });

  it('name any other order id by the SHA-256 of its UTF-16 code units, for ever', () => {
    // Pinned: running instances are named so; the scheme must never change under them.
    expect(fulfillmentInstanceId('O-1 ')).toBe(
      'fulfill-sha256-4ec51de9750cb1de1caff5aab813d27e9f5c93d81cd034a74775b9c65b9c5708',
    );
    expect(cancellationInstanceId('O-\ud800')).toBe(
      'cancel-sha256-0f58ab33f278ec872cd6a6c2a9031f2f9d2571287204dc3f715d5f00b9b698d8',
    );
    expect(orderIdInInstanceId('O-%41')).toBe(
      'sha256-64e48a4962f0434f6e346a8de2074d12b6f4871a74270ceac6d6574bf9f871fc',
    );
    // An order id that looks like the hashed form is hashed too, so it cannot name another order's.
    expect(orderIdInInstanceId('sha256-x')).toBe(
      'sha256-f4aae71e8008db2656cbaae09fa2cd69490fefde56894feaf9e262682e033a9a',
    );
    const hashed = orderIdInInstanceId('O-%41');
    expect(orderIdInInstanceId(hashed)).not.toBe(hashed);
  });

  it('keep lone surrogates apart: U+D800, U+D801 and U+FFFD are three instances', () => {
    const ids = ['O-\ud800', 'O-\ud801', 'O-\ufffd', 'O-\udc00', 'O-\ud800\udc00', 'O-\ud800\ud800'];
    expect(new Set(ids.map(fulfillmentInstanceId)).size).toBe(ids.length);
  });

  it('are one per order id: distinct order ids, and their look-alikes, never share an instance', () => {
    fc.assert(
      fc.property(fc.uniqueArray(anyOrderId, { minLength: 1, maxLength: 8 }), (ids) => {
        const all = [...new Set(ids.flatMap(lookAlikes))].filter((id) => id.length <= 100);
        const names = all.flatMap((id) => [fulfillmentInstanceId(id), cancellationInstanceId(id)]);
        expect(new Set(names).size).toBe(names.length);
      }),
      { numRuns: 300 },
    );
  });

  it('reach the extension as they are, on every route of the durable client, and keep its rules', () => {
    fc.assert(
      fc.property(anyOrderId, (orderId) => {
        for (const id of [fulfillmentInstanceId(orderId), cancellationInstanceId(orderId)]) {
          for (const route of ROUTES)
            expect({ route, arrived: arrivesAs(id, route) }).toEqual({ route, arrived: id });
          expect(instanceIdProblem(id)).toBeNull();
          expect(id.length).toBeLessThanOrEqual(MAX_INSTANCE_ID_LENGTH);
        }
      }),
      { numRuns: 500 },
    );
    // The longest order id the contract takes.
    const longest = 'x'.repeat(100);
    expect(orderIdProblem(longest)).toBeNull();
    expect(fulfillmentInstanceId(longest).length).toBeLessThanOrEqual(MAX_INSTANCE_ID_LENGTH);
    expect(fulfillmentInstanceId(`${longest.slice(1)} `).length).toBeLessThanOrEqual(MAX_INSTANCE_ID_LENGTH);
  });

  it('gave the extension a control character the URL encodes, which it refuses to start', () => {
    for (const control of ['\u007f', '\u0085', '\u009f']) {
      const former = `fulfill-O-${control}`;
      expect(arrivesAs(former, 'orchestrators/fulfillOrder/{id}')).toBe(former);
      expect(instanceIdProblem(former)).toMatch(/control characters/);
      expect(instanceIdProblem(fulfillmentInstanceId(`O-${control}`))).toBeNull();
    }
  });

  it.each([
    ['O-1 ', 'fulfill-O-1'],
    ['O-\t', 'fulfill-O-'],
    ['O\t1', 'fulfill-O1'],
    ['O-\n', 'fulfill-O-'],
    ['O-\ud800', 'fulfill-O-\ufffd'],
    ['O-%41', 'fulfill-O-A'],
    ['O-%2541', 'fulfill-O-A'],
    ['O-%20', 'fulfill-O- '],
    ['O-%2B', 'fulfill-O- '],
    ['O+1', 'fulfill-O 1'],
    ['O-%2F', 'fulfill-O-'],
    ['O-%2Fx', null],
    ['O-\u0000', 'fulfill-O-'],
    ['O-\u0000x', null],
    ['O-%00', null],
    ['O-\u007f', 'fulfill-O-\u007f'],
    ['O-%', 'fulfill-O-%'],
  ])(
    'the former name of order %j reached the extension as %j; the new one arrives as it is',
    (orderId, before) => {
      expect(arrivesAs(`fulfill-${orderId}`, 'instances/{id}')).toBe(before);
      const id = fulfillmentInstanceId(orderId);
      expect(arrivesAs(id, 'instances/{id}')).toBe(id);
    },
  );
});
