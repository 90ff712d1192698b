import fc from 'fast-check';
import { errorMessage, failureKindOf, PermanentError, TransientError } from '../../src/domain/errors';
import {
  compensationOf,
  compensationsOf,
  inStages,
  fulfillmentInstanceId,
  isCompensation,
  isPastPointOfNoReturn,
  isPointOfNoReturn,
  operationKind,
  refundAfterCancellationFee,
  SAGA,
  StepFailedError,
  STEPS,
  COMPENSATIONS,
  OPERATIONS,
  SETTLEMENTS,
  MAX_SAGA_REASON_LENGTH,
  failureReason,
  oneLine,
  settlementsFor,
  type CompensationName,
  type OperationName,
  type StepName,
} from '../../src/domain/saga';

/** The stages the saga runs for the steps that completed: their compensations, registered, in stages. */
function compensationsFor(completed: readonly StepName[]): CompensationName[][] {
  return inStages(compensationsOf(completed));
}

/** Stages with the compensations inside each stage sorted: a stage runs its members together. */
function normalised(stages: CompensationName[][]): CompensationName[][] {
  return stages.map((stage) => [...stage].sort());
}

describe('SAGA', () => {
  it('is the table of docs/saga.md: steps in order, their compensations and stages, refusals, the point of no return', () => {
    expect(SAGA).toEqual([
      {
        step: 'reserveInventory',
        compensation: { name: 'releaseInventory', stage: 2 },
        failsForGood: ['unknown-sku', 'out-of-stock'],
        pointOfNoReturn: false,
        settlement: 'commitInventory',
      },
      {
        step: 'chargePayment',
        compensation: { name: 'refundPayment', stage: 2 },
        failsForGood: ['over-credit-limit'],
        pointOfNoReturn: false,
        settlement: null,
      },
      {
        step: 'createShipment',
        compensation: { name: 'cancelShipment', stage: 1 },
        failsForGood: ['carriers-refused'],
        pointOfNoReturn: false,
        settlement: null,
      },
      {
        step: 'confirmOrder',
        compensation: null,
        failsForGood: [],
        pointOfNoReturn: true,
        settlement: null,
      },
    ]);
  });

  it('derives the steps, the compensations and the operations from the table', () => {
    expect(STEPS).toEqual(['reserveInventory', 'chargePayment', 'createShipment', 'confirmOrder']);
    expect(COMPENSATIONS).toEqual(['releaseInventory', 'refundPayment', 'cancelShipment']);
    expect(OPERATIONS).toEqual([...STEPS, ...COMPENSATIONS, 'commitInventory']);
    expect(operationKind('commitInventory')).toEqual({
      kind: 'settlement',
      settlement: 'commitInventory',
      settles: 'reserveInventory',
    });
  });

  it('knows a compensation by what it is, and the step it undoes', () => {
    for (const name of COMPENSATIONS) expect(isCompensation(name)).toBe(true);
    for (const name of STEPS) expect(isCompensation(name)).toBe(false);
    expect(operationKind('refundPayment')).toEqual({
      kind: 'compensation',
      compensation: 'refundPayment',
      undoes: 'chargePayment',
      stage: 2,
    });
    expect(operationKind('confirmOrder')).toEqual({
      kind: 'step',
      step: 'confirmOrder',
      compensation: null,
      pointOfNoReturn: true,
    });
    expect(compensationOf('createShipment')).toBe('cancelShipment');
    expect(compensationOf('confirmOrder')).toBeNull();
  });

  it('refuses a name that is no operation, even one inherited from Object.prototype', () => {
    expect(() => operationKind('constructor' as OperationName)).toThrow(/no operation of the saga/);
    expect(() => operationKind('toString' as OperationName)).toThrow(/no operation of the saga/);
  });

  it('has one point of no return, the last step', () => {
    expect(STEPS.filter(isPointOfNoReturn)).toEqual(['confirmOrder']);
  });
});

describe('the compensations of the completed steps, in stages', () => {
  const prefixes: Array<[string, StepName[], CompensationName[][]]> = [
    ['no step', [], []],
    ['reserveInventory', ['reserveInventory'], [['releaseInventory']]],
    [
      'reserveInventory, chargePayment',
      ['reserveInventory', 'chargePayment'],
      [['refundPayment', 'releaseInventory']],
    ],
    [
      'reserveInventory, chargePayment, createShipment',
      ['reserveInventory', 'chargePayment', 'createShipment'],
      [['cancelShipment'], ['refundPayment', 'releaseInventory']],
    ],
    [
      'every step',
      ['reserveInventory', 'chargePayment', 'createShipment', 'confirmOrder'],
      [['cancelShipment'], ['refundPayment', 'releaseInventory']],
    ],
  ];

  it.each(prefixes)(
    'after %s: the shipment first, then refund and release together',
    (_case, completed, stages) => {
      expect(normalised(compensationsFor(completed))).toEqual(stages);
    },
  );

  it('covers every prefix of the steps', () => {
    expect(prefixes.map(([, completed]) => completed)).toEqual(
      Array.from({ length: STEPS.length + 1 }, (_, n) => STEPS.slice(0, n)),
    );
  });

  it('compensates exactly the completed steps that have a compensation, each once, last step first', () => {
    for (let n = 0; n <= STEPS.length; n += 1) {
      const done = STEPS.slice(0, n);
      const stages = compensationsFor(done);
      const flat = stages.flat();
      const expected = done.flatMap((step) => compensationOf(step) ?? []);
      expect([...flat].sort()).toEqual([...expected].sort());
      expect(new Set(flat).size).toBe(flat.length);
      for (const stage of stages) expect(stage.length).toBeGreaterThan(0);
      const stageOf = (name: CompensationName) => stages.findIndex((stage) => stage.includes(name));
      if (flat.includes('cancelShipment')) {
        expect(stageOf('cancelShipment')).toBe(0);
        expect(stages[0]).toEqual(['cancelShipment']);
      }
    }
  });

  it('does not depend on the order the completed steps are listed in', () => {
    expect(normalised(compensationsFor(['createShipment', 'reserveInventory', 'chargePayment']))).toEqual([
      ['cancelShipment'],
      ['refundPayment', 'releaseInventory'],
    ]);
  });

  it('returns a fresh list each time', () => {
    const first = compensationsFor(['reserveInventory']);
    first[0].push('cancelShipment');
    expect(compensationsFor(['reserveInventory'])).toEqual([['releaseInventory']]);
  });
});

describe('compensationsOf and inStages', () => {
  it('gives each step its compensation with the stage of its row, none for a step nothing undoes', () => {
    expect(compensationsOf(['createShipment'])).toEqual([{ name: 'cancelShipment', stage: 1 }]);
    expect(compensationsOf(['confirmOrder'])).toEqual([]);
    expect(compensationsOf(['chargePayment', 'reserveInventory'])).toEqual([
      { name: 'releaseInventory', stage: 2 },
      { name: 'refundPayment', stage: 2 },
    ]);
  });

  it('runs the lowest stage first, and one stage in the order its compensations were registered', () => {
    expect(
      inStages([
        { name: 'refundPayment', stage: 2 },
        { name: 'cancelShipment', stage: 1 },
        { name: 'releaseInventory', stage: 2 },
      ]),
    ).toEqual([['cancelShipment'], ['refundPayment', 'releaseInventory']]);
    expect(inStages([])).toEqual([]);
  });

  it('hands out copies: changing one changes no row of SAGA', () => {
    const [registered] = compensationsOf(['reserveInventory']);
    registered.stage = 9;
    expect(compensationsOf(['reserveInventory'])).toEqual([{ name: 'releaseInventory', stage: 2 }]);
  });
});

describe('isPastPointOfNoReturn', () => {
  it.each(
    Array.from({ length: STEPS.length }, (_, n): [string, StepName[]] => [
      STEPS.slice(0, n).join(', ') || 'nothing',
      STEPS.slice(0, n),
    ]),
  )('is false before confirmOrder completed, after %s', (_case, completed) => {
    expect(isPastPointOfNoReturn(completed)).toBe(false);
  });

  it('is true once confirmOrder completed', () => {
    expect(isPastPointOfNoReturn([...STEPS])).toBe(true);
    expect(isPastPointOfNoReturn(['confirmOrder'])).toBe(true);
  });
});

describe('refundAfterCancellationFee', () => {
  it.each<[number, number, number, number]>([
    [4749, 10, 475, 4274],
    [1000, 10, 100, 900],
    [999, 10, 100, 899],
    [5, 10, 1, 4],
    [4, 10, 0, 4],
    [0, 10, 0, 0],
    [4749, 0, 0, 4749],
    [4749, 100, 4749, 0],
    [3333, 25, 833, 2500],
  ])('on a total of %i at %i%%: fee %i, refund %i', (total, percent, fee, refund) => {
    expect(refundAfterCancellationFee(total, percent)).toEqual({ fee, refund });
  });

  it('splits the total into two whole amounts in minor units, the fee within the total', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000_00 }),
        fc.integer({ min: 0, max: 100 }),
        (total, percent) => {
          const { fee, refund } = refundAfterCancellationFee(total, percent);
          expect(Number.isInteger(fee)).toBe(true);
          expect(Number.isInteger(refund)).toBe(true);
          expect(fee + refund).toBe(total);
          expect(fee).toBeGreaterThanOrEqual(0);
          expect(fee).toBeLessThanOrEqual(total);
          expect(Math.abs(fee - (total * percent) / 100)).toBeLessThanOrEqual(0.5);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('fulfillmentInstanceId', () => {
  it('names the fulfillment instance after the order', () => {
    expect(fulfillmentInstanceId('O-17')).toBe('fulfill-O-17');
  });
});

describe('failures', () => {
  it('makes a step failure permanent, with its step and code', () => {
    const error = new StepFailedError('chargePayment', 'over-credit-limit', 'total 5000 over limit 4000');
    expect(error).toBeInstanceOf(PermanentError);
    expect(failureKindOf(error)).toBe('permanent');
    expect(error.step).toBe('chargePayment');
    expect(error.code).toBe('over-credit-limit');
    expect(error.name).toBe('StepFailedError');
  });

  it('accepts only the refusals the table lists for the step (checked by the compiler)', () => {
    // @ts-expect-error out-of-stock is a refusal of reserveInventory, not of chargePayment
    const wrong = new StepFailedError('chargePayment', 'out-of-stock', 'no');
    expect(wrong.code).toBe('out-of-stock');
  });

  it('treats transient and unknown errors as transient', () => {
    expect(failureKindOf(new TransientError('store-throttled', '429'))).toBe('transient');
    expect(failureKindOf(new Error('bug'))).toBe('transient');
    expect(failureKindOf('text')).toBe('transient');
  });

  it('gives the text of anything thrown', () => {
    expect(errorMessage(new TransientError('store-throttled', '429'))).toBe('429');
    expect(errorMessage('text')).toBe('text');
    expect(errorMessage(42)).toBe('42');
  });
});

describe('settlementsFor', () => {
  it('settles the stock once its reservation completed, and nothing else', () => {
    expect(settlementsFor([])).toEqual([]);
    expect(settlementsFor(['chargePayment', 'createShipment', 'confirmOrder'])).toEqual([]);
    expect(settlementsFor(['reserveInventory'])).toEqual(['commitInventory']);
    expect(settlementsFor([...STEPS])).toEqual(['commitInventory']);
    expect(SETTLEMENTS).toEqual(['commitInventory']);
  });
});

describe('oneLine', () => {
  it('turns every run of whitespace, newlines included, into one space and trims the ends', () => {
    expect(oneLine('  a\n\n b\t\tc  ')).toBe('a b c');
    expect(oneLine('plain')).toBe('plain');
  });

  it('keeps text of exactly the limit, and cuts longer text to the limit with an ellipsis', () => {
    expect(oneLine('abcde', 5)).toBe('abcde');
    expect(oneLine('abcdef', 5)).toBe('abcd…');
    expect(oneLine('abc defgh', 5)).toBe('abc…');
    expect(oneLine('x'.repeat(MAX_SAGA_REASON_LENGTH))).toBe('x'.repeat(MAX_SAGA_REASON_LENGTH));
    const cut = oneLine('y'.repeat(MAX_SAGA_REASON_LENGTH + 1));
    expect(cut).toBe(`${'y'.repeat(MAX_SAGA_REASON_LENGTH - 1)}…`);
    expect(cut).toHaveLength(MAX_SAGA_REASON_LENGTH);
    expect(MAX_SAGA_REASON_LENGTH).toBe(300);
  });
});

describe('failureReason', () => {
  it('says whether the step failed for good or after its retries ran out, on one line', () => {
    expect(
      failureReason('chargePayment', { retriesRanOut: false, attempts: 1, message: 'over\nlimit' }),
    ).toBe('chargePayment failed: over limit');
    expect(failureReason('refundPayment', { retriesRanOut: true, attempts: 5, message: 'timeout' })).toBe(
      'refundPayment failed after 5 attempts: timeout',
    );
    expect(
      failureReason('createShipment', { retriesRanOut: false, attempts: 1, message: 'z'.repeat(400) }),
    ).toHaveLength(MAX_SAGA_REASON_LENGTH);
  });
});
