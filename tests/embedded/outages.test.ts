/** The outage faults: how `--faults` reads them, and when a dependency is down. */
import { AuthorizationPendingError, TransientError } from '../../src/domain/errors';
import { faultRandom, parseFaults } from '../../local/faults';
import {
  createAuthorizationDelay,
  createOutage,
  OUTAGE_START_CALLS,
  withSendAuthorization,
  withSendOutage,
  withStoreAuthorization,
  type AppClock,
} from '../../local/outages';
import { createEmbeddedStore } from '../../local/store/document-store';
import type { OutgoingMessage } from '../../src/services/ports';

function manualClock(): AppClock & { advance(ms: number): void } {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

describe('parseFaults with outages', () => {
  it('reads seconds for outages beside probabilities for the other faults', () => {
    expect(parseFaults('storeOutage=30, sendOutage=0.5,durableOutage=600,transient=0.1')).toEqual({
      storeOutage: 30,
      sendOutage: 0.5,
      durableOutage: 600,
      transient: 0.1,
    });
  });

  it.each(['storeOutage=-1', 'sendOutage=', 'durableOutage=forever', 'storeOutage=90000', 'storeOutage=1=2'])(
    '%s: a message that names the outage and asks for seconds',
    (spec) => {
      expect(() => parseFaults(spec)).toThrow(/--faults: \w+Outage needs a duration in seconds/);
    },
  );

  it('an unknown name lists the outages among the known faults', () => {
    expect(() => parseFaults('meteor=1')).toThrow(/storeOutage, sendOutage, durableOutage/);
  });
});

describe('an outage', () => {
  it('begins at a seeded call among the first few and fails every call while it lasts', () => {
    const clock = manualClock();
    const outage = createOutage('storeOutage', 60, faultRandom(3, 'storeOutage'), clock);
    const outcomes: string[] = [];
    const call = (): void => {
      try {
        outage.check('orders.read');
        outcomes.push('ok');
      } catch (error) {
        expect(error).toBeInstanceOf(TransientError);
        outcomes.push('down');
      }
    };
    for (let i = 0; i < OUTAGE_START_CALLS + 2; i++) call();
    const firstDown = outcomes.indexOf('down');
    expect(firstDown).toBeGreaterThanOrEqual(0);
    expect(firstDown).toBeLessThan(OUTAGE_START_CALLS);
    expect(outcomes.slice(firstDown).every((outcome) => outcome === 'down')).toBe(true);
    expect(outage.window()).toEqual({ from: 0, until: 60_000 });

    clock.advance(59_999);
    call();
    expect(outcomes.at(-1)).toBe('down');
    clock.advance(1);
    call();
    expect(outcomes.at(-1)).toBe('ok');
    expect(outage.injected()).toBe(outcomes.filter((outcome) => outcome === 'down').length);
  });

  it('the same seed picks the same moment; zero seconds is no outage', () => {
    const moment = (seed: number): number | undefined => {
      const outage = createOutage('sendOutage', 1, faultRandom(seed, 'sendOutage'), manualClock());
      for (let call = 1; call <= OUTAGE_START_CALLS; call++) {
        try {
          outage.check('send');
        } catch {
          return call;
        }
      }
      return undefined;
    };
    expect(moment(5)).toBe(moment(5));
    const none = createOutage('storeOutage', 0, faultRandom(1, 'storeOutage'), manualClock());
    for (let i = 0; i < 10; i++) none.check('read');
    expect(none.injected()).toBe(0);
  });

  it('a send outage fails only the queues it covers, and nothing of a failed send arrives', async () => {
    const sent: string[] = [];
    const sender = withSendOutage(
      {
        send: async (queue: string, messages: readonly OutgoingMessage[]) => {
          sent.push(...messages.map((message) => `${queue}/${message.messageId}`));
        },
      },
      createOutage('sendOutage', 10, () => 0, manualClock()),
      ['parked'],
    );
    await sender.send('ledger', [{ messageId: 'B-1', body: {} }]);
    await expect(sender.send('parked', [{ messageId: 'P-1', body: {} }])).rejects.toThrow(TransientError);
    expect(sent).toEqual(['ledger/B-1']);
  });
});

describe('authorizationDelay', () => {
  it('is read like an outage, in seconds', () => {
    expect(parseFaults('authorizationDelay=600')).toEqual({ authorizationDelay: 600 });
    expect(() => parseFaults('authorizationDelay=-1')).toThrow(
      /--faults: authorizationDelay needs a duration in seconds/,
    );
  });

  it('refuses from the run’s start, every call, as the Azure adapters classify the SDKs’ refusals', async () => {
    const clock = manualClock();
    const delay = createAuthorizationDelay(60, clock);
    expect(delay.window()).toEqual({ from: 0, until: 60_000 });
    const sent: string[] = [];
    const sender = withSendAuthorization({ send: async (queue) => void sent.push(queue) }, delay);
    const orders = withStoreAuthorization(createEmbeddedStore().container('orders', '/orderId'), delay);

    const refusedSend = await sender.send('parked', []).catch((error: unknown) => error);
    expect(refusedSend).toBeInstanceOf(AuthorizationPendingError);
    expect(refusedSend).toMatchObject({
      role: 'Azure Service Bus Data Sender',
      resource: 'queue parked of the embedded broker',
    });
    for (const call of [
      () => orders.read('O-1', 'O-1'),
      () => orders.batch('O-1', [{ op: 'create', document: { id: 'O-1', orderId: 'O-1' } }]),
    ]) {
      const refused = await call().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AuthorizationPendingError);
      expect(refused).toMatchObject({
        role: 'Cosmos DB Built-in Data Contributor',
        resource: 'container orders of database orderpipeline',
      });
    }
    expect(sent).toEqual([]);
    expect(delay.injected()).toBe(3);

    clock.advance(60_000);
    await sender.send('parked', []);
    await expect(orders.read('O-1', 'O-1')).resolves.toBeUndefined();
    expect(sent).toEqual(['parked']);
    expect(delay.injected()).toBe(3);
  });

  it('of 0 s refuses nothing and never opens', async () => {
    const delay = createAuthorizationDelay(0, manualClock());
    const sender = withSendAuthorization({ send: async () => undefined }, delay);
    await sender.send('parked', []);
    expect(delay.window()).toBeNull();
    expect(delay.injected()).toBe(0);
  });
});
