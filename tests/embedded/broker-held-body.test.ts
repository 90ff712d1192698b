/**
 * The broker holds a JSON body as its text and copies it once per delivery:
 * neither the sender nor a handler can change what a later delivery gets, a body JSON would not
 * give back exactly keeps its structured copy, and the size is what the one estimate says.
 */
import { createEmbeddedBroker } from '../../local/broker/broker';
import { deliveredJson } from '../../local/broker/clone-body';
import { serviceBusBody } from '../../local/worker/service-bus';
import { estimateMessageBytes, MessageSizeExceededError } from '../../local/broker/message-size';

function queue(maxBatchBytes?: number): ReturnType<typeof createEmbeddedBroker> {
  const broker = createEmbeddedBroker(maxBatchBytes === undefined ? {} : { maxBatchBytes });
  broker.createQueue('q', { maxDeliveryCount: 5 });
  return broker;
}

describe('held message bodies', () => {
  it('a handler that changes its body, or a sender that changes what it sent, changes no later delivery', async () => {
    const broker = queue();
    const body = { order: { lines: [{ sku: 'A', quantity: 1 }] }, note: 'x' };
    await broker.send('q', [{ messageId: 'm-1', body }]);
    body.order.lines[0].quantity = 99;
    const first = broker.receive('q');
    expect(first?.body).toEqual({ order: { lines: [{ sku: 'A', quantity: 1 }] }, note: 'x' });
    (first?.body as typeof body).order.lines.push({ sku: 'B', quantity: 2 });
    (first?.body as typeof body).note = 'changed';
    broker.abandon(first!);
    const second = broker.receive('q');
    expect(second?.body).toEqual({ order: { lines: [{ sku: 'A', quantity: 1 }] }, note: 'x' });
    expect(second?.body).not.toBe(first?.body);
    expect(broker.peek('q')[0].body).toEqual({ order: { lines: [{ sku: 'A', quantity: 1 }] }, note: 'x' });
  });

  it('the host hands over the JSON text it holds, without parsing a copy; once the body is read, its copy', async () => {
    const broker = queue();
    await broker.send('q', [{ messageId: 'm-1', body: { a: [1, 'two', null, true] } }]);
    const received = broker.receive('q')!;
    expect(deliveredJson(received)).toBe('{"a":[1,"two",null,true]}');
    expect(serviceBusBody(received)).toEqual({ string: '{"a":[1,"two",null,true]}' });
    (received.body as { a: unknown[] }).a.push(5);
    expect(deliveredJson(received)).toBeUndefined();
    expect(serviceBusBody(received)).toEqual({ string: '{"a":[1,"two",null,true,5]}' });
  });

  it.each([
    ['a property that is undefined', { a: undefined, b: 1 }],
    ['a date', { at: new Date(0) }],
    ['negative zero', { n: -0 }],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the point
    ['a hole in an array', { list: [1, , 3] }],
    ['bytes', new Uint8Array([1, 2])],
  ])('a body with %s is kept as a structured copy, as before', async (_, body) => {
    const broker = queue();
    await broker.send('q', [{ messageId: 'm-1', body }]);
    const received = broker.receive('q')!;
    expect(deliveredJson(received)).toBeUndefined();
    expect(received.body).toEqual(body);
    expect(received.body).not.toBe(body);
  });

  it('sizes a message on the text it keeps exactly as the shared estimate does', async () => {
    const message = { messageId: 'm-1', sessionId: undefined, body: { text: 'é'.repeat(500) } };
    const size = estimateMessageBytes(message);
    await expect(queue(size).send('q', [message])).resolves.toBeUndefined();
    await expect(queue(size - 1).send('q', [message])).rejects.toThrow(MessageSizeExceededError);
  });
});
