import {
  describeProblems,
  MAX_ENTRY_DEPTH,
  parseEntryMessage,
  parseLedgerMessage,
  validateEntry,
  type Entry,
  type LedgerBatch,
  type Validation,
} from '../../src/domain/entry';
import { rawAdded, rawAmended, rawCreated, rawDeleted, type Raw } from '../support/domain';

function problemsOf(result: Validation<unknown>): string[] {
  if (result.ok) throw new Error(`expected problems, got a valid value ${JSON.stringify(result.value)}`);
  return result.problems;
}

function valueOf<T>(result: Validation<T>): T {
  if (!result.ok) throw new Error(`expected a valid value, got ${describeProblems(result.problems)}`);
  return result.value;
}

/** `raw` without `key`: the field is missing, not undefined. */
function without(raw: Raw, key: string): Raw {
  const copy = { ...raw };
  delete copy[key];
  return copy;
}

function withData(raw: Raw, data: Raw): Raw {
  return { ...raw, data };
}

const VALID: Record<Entry['type'], Raw> = {
  OrderCreated: rawCreated(1, 'T-1'),
  TransactionAdded: rawAdded(2, 'T-2', 2, 1250),
  TransactionAmended: rawAmended(3, 'T-3', 'T-2', { quantity: 3 }),
  OrderDeleted: rawDeleted(4, 'T-4', { data: { reason: 'customer asked' } }),
};

describe('validateEntry: a valid entry of every type', () => {
  it.each(Object.entries(VALID))('accepts a valid %s and normalises it', (_type, raw) => {
    expect(valueOf(validateEntry(raw))).toEqual(raw);
  });
});

describe('validateEntry: transactionId', () => {
  const base = rawAdded(2, 'T-2', 1, 100);
  it.each<[string, Raw, string]>([
    ['missing', without(base, 'transactionId'), 'transactionId must be a non-empty string, got nothing'],
    ['empty', { ...base, transactionId: '' }, 'transactionId must be a non-empty string, got ""'],
    ['a number', { ...base, transactionId: 42 }, 'transactionId must be a non-empty string, got 42'],
    ['null', { ...base, transactionId: null }, 'transactionId must be a non-empty string, got null'],
    [
      '101 characters',
      { ...base, transactionId: 'T'.repeat(101) },
      'transactionId must be at most 100 bytes in UTF-8 JSON, escapes included, got 101',
    ],
  ])('rejects a transactionId that is %s', (_case, raw, problem) => {
    expect(problemsOf(validateEntry(raw))).toEqual([problem]);
  });

  it('accepts a transactionId of exactly 100 characters', () => {
    const transactionId = 'T'.repeat(100);
    expect(valueOf(validateEntry({ ...base, transactionId })).transactionId).toBe(transactionId);
  });
});

describe('validateEntry: orderId', () => {
  const base = rawAdded(2, 'T-2', 1, 100);
  it.each<[string, Raw, string]>([
    ['missing', without(base, 'orderId'), 'orderId must be a non-empty string, got nothing'],
    ['empty', { ...base, orderId: '' }, 'orderId must be a non-empty string, got ""'],
    ['a number', { ...base, orderId: 17 }, 'orderId must be a non-empty string, got 17'],
    [
      '101 characters',
      { ...base, orderId: 'O'.repeat(101) },
      'orderId must be at most 100 bytes in UTF-8 JSON, escapes included, got 101',
    ],
  ])('rejects an orderId that is %s', (_case, raw, problem) => {
    expect(problemsOf(validateEntry(raw))).toEqual([problem]);
  });

  it.each(['/', '\\', '?', '#'])('rejects an orderId containing %s', (character) => {
    const orderId = `O${character}17`;
    expect(problemsOf(validateEntry({ ...base, orderId }))).toEqual([
      `orderId must not contain / \\ ? or #, got ${JSON.stringify(orderId)}`,
    ]);
  });

  it('accepts an orderId of exactly 100 characters with other punctuation', () => {
    const orderId = `O-17_.:${'x'.repeat(93)}`;
    expect(orderId).toHaveLength(100);
    expect(valueOf(validateEntry({ ...base, orderId })).orderId).toBe(orderId);
  });
});

describe('validateEntry: sequence', () => {
  const base = rawAdded(2, 'T-2', 1, 100);
  it.each<[string, unknown, string]>([
    ['0', 0, 'sequence must be an integer >= 1, got 0'],
    ['-1', -1, 'sequence must be an integer >= 1, got -1'],
    ['1.5', 1.5, 'sequence must be an integer >= 1, got 1.5'],
    ['the string "1"', '1', 'sequence must be an integer >= 1, got "1"'],
    ['missing', undefined, 'sequence must be an integer >= 1, got nothing'],
  ])('rejects a sequence that is %s', (_case, sequence, problem) => {
    const raw = sequence === undefined ? without(base, 'sequence') : { ...base, sequence };
    expect(problemsOf(validateEntry(raw))).toEqual([problem]);
  });

  it('accepts sequence 1', () => {
    expect(valueOf(validateEntry({ ...base, sequence: 1 })).sequence).toBe(1);
  });
});

describe('validateEntry: type', () => {
  const base = rawAdded(2, 'T-2', 1, 100);
  const rule = 'type must be one of OrderCreated, TransactionAdded, TransactionAmended, OrderDeleted';
  it.each<[string, Raw, string]>([
    ['unknown', { ...base, type: 'OrderShipped' }, `${rule}, got "OrderShipped"`],
    ['of another case', { ...base, type: 'orderCreated' }, `${rule}, got "orderCreated"`],
    ['missing', without(base, 'type'), `${rule}, got nothing`],
    ['not a string', { ...base, type: 1 }, `${rule}, got 1`],
  ])('rejects a type that is %s', (_case, raw, problem) => {
    expect(problemsOf(validateEntry(raw))).toEqual([problem]);
  });
});

describe('validateEntry: final', () => {
  const base = rawAdded(2, 'T-2', 1, 100);
  it.each<[string, unknown]>([
    ['a string', 'yes'],
    ['a number', 1],
    ['null', null],
  ])('rejects a final that is %s', (_case, final) => {
    expect(problemsOf(validateEntry({ ...base, final }))).toEqual([
      `final must be a boolean when present, got ${JSON.stringify(final)}`,
    ]);
  });

  it('normalises final: false and an absent final alike, with no final field', () => {
    const absent = valueOf(validateEntry(base));
    const falseFlag = valueOf(validateEntry({ ...base, final: false }));
    expect(falseFlag).toEqual(absent);
    expect('final' in falseFlag).toBe(false);
    expect('final' in absent).toBe(false);
  });

  it('keeps final: true', () => {
    expect(valueOf(validateEntry({ ...base, final: true })).final).toBe(true);
  });
});

describe('validateEntry: data', () => {
  it.each(['OrderCreated', 'TransactionAdded', 'TransactionAmended'] as const)(
    'requires data to be an object for %s',
    (type) => {
      expect(problemsOf(validateEntry(without(VALID[type], 'data')))).toEqual([
        'data must be an object, got nothing',
      ]);
      expect(problemsOf(validateEntry({ ...VALID[type], data: [1] }))).toEqual([
        'data must be an object, got [1]',
      ]);
    },
  );

  describe('OrderCreated', () => {
    const base = rawCreated(1, 'T-1');
    it.each<[string, Raw, string]>([
      ['customerId missing', { currency: 'EUR' }, 'data.customerId must be a non-empty string, got nothing'],
      [
        'customerId empty',
        { customerId: '', currency: 'EUR' },
        'data.customerId must be a non-empty string, got ""',
      ],
      [
        'currency in lower case',
        { customerId: 'C-9', currency: 'eur' },
        'data.currency must be three capital letters, got "eur"',
      ],
      [
        'currency of four letters',
        { customerId: 'C-9', currency: 'EURO' },
        'data.currency must be three capital letters, got "EURO"',
      ],
      ['currency missing', { customerId: 'C-9' }, 'data.currency must be three capital letters, got nothing'],
      [
        'currency not a string',
        { customerId: 'C-9', currency: 978 },
        'data.currency must be three capital letters, got 978',
      ],
    ])('rejects %s', (_case, data, problem) => {
      expect(problemsOf(validateEntry(withData(base, data)))).toEqual([problem]);
    });

    it('accepts a customer and a currency of three capital letters', () => {
      expect(valueOf(validateEntry(withData(base, { customerId: 'C-9', currency: 'USD' }))).data).toEqual({
        customerId: 'C-9',
        currency: 'USD',
      });
    });
  });

  describe('TransactionAdded', () => {
    const base = rawAdded(2, 'T-2', 1, 100);
    const ok = { sku: 'SKU-1', quantity: 2, unitPrice: 1250 };
    it.each<[string, Raw, string]>([
      ['sku missing', { quantity: 2, unitPrice: 1250 }, 'data.sku must be a non-empty string, got nothing'],
      ['sku empty', { ...ok, sku: '' }, 'data.sku must be a non-empty string, got ""'],
      ['quantity 0', { ...ok, quantity: 0 }, 'data.quantity must be an integer >= 1, got 0'],
      ['quantity 1.5', { ...ok, quantity: 1.5 }, 'data.quantity must be an integer >= 1, got 1.5'],
      ['quantity a string', { ...ok, quantity: '2' }, 'data.quantity must be an integer >= 1, got "2"'],
      [
        'quantity missing',
        { sku: 'SKU-1', unitPrice: 1 },
        'data.quantity must be an integer >= 1, got nothing',
      ],
      ['unitPrice -1', { ...ok, unitPrice: -1 }, 'data.unitPrice must be an integer >= 0, got -1'],
      ['unitPrice 0.5', { ...ok, unitPrice: 0.5 }, 'data.unitPrice must be an integer >= 0, got 0.5'],
      [
        'unitPrice missing',
        { sku: 'SKU-1', quantity: 1 },
        'data.unitPrice must be an integer >= 0, got nothing',
      ],
    ])('rejects %s', (_case, data, problem) => {
      expect(problemsOf(validateEntry(withData(base, data)))).toEqual([problem]);
    });

    it('accepts unitPrice 0 and quantity 1', () => {
      const data = { sku: 'SKU-free', quantity: 1, unitPrice: 0 };
      expect(valueOf(validateEntry(withData(base, data))).data).toEqual(data);
    });
  });

  describe('TransactionAmended', () => {
    const base = rawAmended(3, 'T-3', 'T-2', { quantity: 3 });
    it.each<[string, Raw, string]>([
      [
        'targetTransactionId missing',
        { quantity: 3 },
        'data.targetTransactionId must be a non-empty string, got nothing',
      ],
      [
        'targetTransactionId empty',
        { targetTransactionId: '', quantity: 3 },
        'data.targetTransactionId must be a non-empty string, got ""',
      ],
      [
        'neither quantity nor unitPrice',
        { targetTransactionId: 'T-2' },
        'data must amend at least one of quantity, unitPrice',
      ],
      [
        'quantity 0',
        { targetTransactionId: 'T-2', quantity: 0 },
        'data.quantity must be an integer >= 1, got 0',
      ],
      [
        'quantity 1.5 beside a good unitPrice',
        { targetTransactionId: 'T-2', quantity: 1.5, unitPrice: 10 },
        'data.quantity must be an integer >= 1, got 1.5',
      ],
      [
        'unitPrice -1',
        { targetTransactionId: 'T-2', unitPrice: -1 },
        'data.unitPrice must be an integer >= 0, got -1',
      ],
    ])('rejects %s', (_case, data, problem) => {
      expect(problemsOf(validateEntry(withData(base, data)))).toEqual([problem]);
    });

    it.each<[string, Raw]>([
      ['quantity only', { targetTransactionId: 'T-2', quantity: 3 }],
      ['unitPrice only, 0', { targetTransactionId: 'T-2', unitPrice: 0 }],
      ['both', { targetTransactionId: 'T-2', quantity: 1, unitPrice: 5 }],
    ])('accepts an amendment of %s', (_case, data) => {
      expect(valueOf(validateEntry(withData(base, data))).data).toEqual(data);
    });
  });

  describe('OrderDeleted', () => {
    const base = rawDeleted(4, 'T-4');
    it('accepts no data at all, normalised to empty data', () => {
      expect(valueOf(validateEntry(base)).data).toEqual({});
    });

    it('accepts a reason string and empty data', () => {
      expect(valueOf(validateEntry(withData(base, { reason: 'duplicate order' }))).data).toEqual({
        reason: 'duplicate order',
      });
      expect(valueOf(validateEntry(withData(base, {}))).data).toEqual({});
    });

    it.each<[string, unknown]>([
      ['a number', 5],
      ['an object', { text: 'x' }],
    ])('rejects a reason that is %s', (_case, reason) => {
      expect(problemsOf(validateEntry(withData(base, { reason })))).toEqual([
        `data.reason must be a string when present, got ${JSON.stringify(reason)}`,
      ]);
    });

    it('rejects data that is not an object', () => {
      expect(problemsOf(validateEntry({ ...base, data: 'gone' }))).toEqual([
        'data must be an object, got "gone"',
      ]);
    });
  });
});

describe('validateEntry: the entry as a whole', () => {
  it.each<[string, unknown, string]>([
    ['a number', 5, 'entry must be a JSON object, got 5'],
    ['null', null, 'entry must be a JSON object, got null'],
    ['an array', [1, 2], 'entry must be a JSON object, got [1,2]'],
    ['a string', 'T-1', 'entry must be a JSON object, got "T-1"'],
  ])('rejects an entry that is %s', (_case, raw, problem) => {
    expect(problemsOf(validateEntry(raw))).toEqual([problem]);
  });

  it('reports every broken field, each by its path', () => {
    const problems = problemsOf(
      validateEntry({
        transactionId: '',
        orderId: 'O/1',
        sequence: 0,
        type: 'TransactionAdded',
        final: 'no',
        data: {},
      }),
    );
    expect(problems).toEqual([
      'transactionId must be a non-empty string, got ""',
      'orderId must not contain / \\ ? or #, got "O/1"',
      'sequence must be an integer >= 1, got 0',
      'final must be a boolean when present, got "no"',
      'data.sku must be a non-empty string, got nothing',
      'data.quantity must be an integer >= 1, got nothing',
      'data.unitPrice must be an integer >= 0, got nothing',
    ]);
    expect(describeProblems(problems)).toBe(problems.join('; '));
  });

  it('prefixes every field with the path given', () => {
    expect(
      problemsOf(
        validateEntry(
          withData(VALID.TransactionAdded, { sku: 'S', quantity: 0, unitPrice: 1 }),
          'entries[3]',
        ),
      ),
    ).toEqual(['entries[3].data.quantity must be an integer >= 1, got 0']);
    expect(problemsOf(validateEntry(7, 'entries[2]'))).toEqual(['entries[2] must be a JSON object, got 7']);
  });

  it('drops unknown fields, at the top and inside data', () => {
    const value = valueOf(
      validateEntry({
        ...VALID.TransactionAdded,
        note: 'x',
        data: { sku: 'SKU-1', quantity: 2, unitPrice: 1250, colour: 'red' },
      }),
    );
    expect(value).toEqual({
      transactionId: 'T-2',
      orderId: 'O-1',
      sequence: 2,
      type: 'TransactionAdded',
      data: { sku: 'SKU-1', quantity: 2, unitPrice: 1250 },
    });
  });

  it('shortens a long shown value', () => {
    const [problem] = problemsOf(validateEntry({ ...VALID.TransactionAdded, sequence: 'x'.repeat(200) }));
    expect(problem.startsWith('sequence must be an integer >= 1, got "xxx')).toBe(true);
    expect(problem.endsWith('...')).toBe(true);
    expect(problem.length).toBeLessThan(120);
  });
});

describe('validateEntry: how deep an entry may nest', () => {
  /** `levels` objects nested inside one another: 1 is `{}`. */
  function nested(levels: number): Raw {
    const root: Raw = {};
    let inner = root;
    for (let level = 1; level < levels; level++) {
      const next: Raw = {};
      inner.deeper = next;
      inner = next;
    }
    return root;
  }

  it(`accepts an entry of exactly ${MAX_ENTRY_DEPTH} levels, its unknown field dropped`, () => {
    // The entry is level 1, its data level 2: data may hold MAX_ENTRY_DEPTH - 2 more.
    const data = { ...(VALID.OrderCreated.data as Raw), extra: nested(MAX_ENTRY_DEPTH - 2) };
    expect(valueOf(validateEntry(withData(VALID.OrderCreated, data))).data).toEqual(VALID.OrderCreated.data);
  });

  it('parks one level deeper, naming the field, and also 100,000 levels without recursion', () => {
    for (const levels of [MAX_ENTRY_DEPTH - 1, 100_000]) {
      const data = { ...(VALID.OrderCreated.data as Raw), extra: nested(levels) };
      expect(problemsOf(validateEntry(withData(VALID.OrderCreated, data), 'entries[0]'))).toEqual([
        `entries[0].data is nested more than ${MAX_ENTRY_DEPTH} levels deep (the entry is level 1)`,
      ]);
    }
    const arrays = {
      ...VALID.OrderCreated,
      note: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
    };
    expect(problemsOf(validateEntry(arrays))[0]).toContain('note is nested more than');
  });
});

describe('validation messages a person can act on', () => {
  it('a number too large for JSON (1e400) is said, not shown as null', () => {
    const raw = JSON.parse(
      '{"transactionId":"T-2","orderId":"O-1","sequence":2,"type":"TransactionAdded",' +
        '"data":{"sku":"S","quantity":1e400,"unitPrice":1}}',
    ) as Raw;
    const [problem] = problemsOf(validateEntry(raw));
    expect(problem).toContain('data.quantity');
    expect(problem).not.toContain('null');
    expect(problem).toContain('Infinity');
  });

  it('an integer beyond 2^53 - 1 (1e308) is told the rule: a safe integer', () => {
    const [problem] = problemsOf(
      validateEntry(withData(VALID.TransactionAdded, { sku: 'S', quantity: 1, unitPrice: 1e308 })),
    );
    expect(problem).toBe('data.unitPrice must be a safe integer >= 0 (at most 9007199254740991), got 1e+308');
  });

  it('a length counts the bytes the store writes, UTF-8 JSON with its escapes, and says so next to the characters', () => {
    const [emoji] = problemsOf(validateEntry({ ...VALID.OrderCreated, orderId: '🙂'.repeat(26) }));
    expect(emoji).toBe(
      'orderId must be at most 100 bytes in UTF-8 JSON, escapes included, got 104 (26 characters)',
    );
    // JSON writes U+0001 as \u0001 (6 bytes), `"` as \" (2), a lone surrogate as \udXXX (6).
    const [control] = problemsOf(
      validateEntry({ ...VALID.OrderCreated, transactionId: '\u0001'.repeat(17) }),
    );
    expect(control).toBe(
      'transactionId must be at most 100 bytes in UTF-8 JSON, escapes included, got 102 (17 characters)',
    );
    const [quotes] = problemsOf(
      validateEntry(withData(VALID.TransactionAdded, { sku: '"'.repeat(51), quantity: 1, unitPrice: 1 })),
    );
    expect(quotes).toBe(
      'data.sku must be at most 100 bytes in UTF-8 JSON, escapes included, got 102 (51 characters)',
    );
    const [surrogates] = problemsOf(validateEntry({ ...VALID.OrderCreated, orderId: '\ud800'.repeat(17) }));
    expect(surrogates).toMatch(/^orderId must be at most 100 bytes .*got 102 \(17 characters\)$/);
    for (const id of ['🙂'.repeat(25), 'é'.repeat(50), '\u0001'.repeat(16) + 'xxxx', '€'.repeat(33) + 'x']) {
      expect(valueOf(validateEntry({ ...VALID.OrderCreated, orderId: id })).orderId).toBe(id);
    }
  });

  it('a body starting with a byte-order mark is named, not shown as an invisible character', () => {
    const [problem] = problemsOf(parseLedgerMessage('\ufeff{"batchId":"B-1","entries":[]}'));
    expect(problem).toContain('byte-order mark (U+FEFF)');
  });
});

describe('parseLedgerMessage', () => {
  const entries = [VALID.OrderCreated, VALID.TransactionAdded, VALID.TransactionAmended, VALID.OrderDeleted];
  const batch = { batchId: 'B-000042', entries };

  function entriesOf(result: Validation<LedgerBatch>): Validation<Entry>[] {
    return valueOf(result).entries.map((item) => item.result);
  }

  it('parses JSON text', () => {
    const parsed = valueOf(parseLedgerMessage(JSON.stringify(batch, null, 2)));
    expect(parsed.batchId).toBe('B-000042');
    expect(parsed.entries.map((item) => item.index)).toEqual([0, 1, 2, 3]);
    expect(parsed.entries.map((item) => item.raw)).toEqual(entries);
    expect(parsed.entries.map((item) => valueOf(item.result))).toEqual(entries);
  });

  it.each<[string, unknown]>([
    ['a Buffer', Buffer.from(JSON.stringify(batch), 'utf8')],
    ['a Uint8Array', new TextEncoder().encode(JSON.stringify(batch))],
    ['already parsed JSON', batch],
  ])('parses a body that is %s', (_case, body) => {
    const parsed = valueOf(parseLedgerMessage(body));
    expect(parsed.batchId).toBe('B-000042');
    expect(parsed.entries.map((item) => valueOf(item.result))).toEqual(entries);
  });

  it.each<[string, unknown]>([
    ['truncated JSON text', '{"batchId": "B-1", "entries": ['],
    ['plain text', 'hello'],
    ['bytes that are not JSON', Buffer.from('not json')],
  ])('fails a body that is %s as not JSON', (_case, body) => {
    const problems = problemsOf(parseLedgerMessage(body));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^body is not valid JSON: /);
  });

  it.each<[string, unknown, string]>([
    ['a JSON array', '[1,2]', 'body must be a JSON object, got [1,2]'],
    ['a JSON number', '42', 'body must be a JSON object, got 42'],
    ['JSON null', 'null', 'body must be a JSON object, got null'],
    ['a JSON string', '"B-1"', 'body must be a JSON object, got "B-1"'],
    ['undefined', undefined, 'body must be a JSON object, got nothing'],
  ])('fails a body that is %s as not an object', (_case, body, problem) => {
    expect(problemsOf(parseLedgerMessage(body))).toEqual([problem]);
  });

  it.each<[string, unknown, string]>([
    ['missing', { batchId: 'B-1' }, 'entries must be an array, got nothing'],
    ['an object', { batchId: 'B-1', entries: {} }, 'entries must be an array, got {}'],
    ['a string', { batchId: 'B-1', entries: 'T-1' }, 'entries must be an array, got "T-1"'],
    ['null', { batchId: 'B-1', entries: null }, 'entries must be an array, got null'],
  ])('fails a batch whose entries are %s', (_case, body, problem) => {
    expect(problemsOf(parseLedgerMessage(body))).toEqual([problem]);
  });

  it('parks whole a batch without a batchId, or with one over 100 characters', () => {
    // docs/messages.md (the order of checks): no batchId, parked whole (it used to fall back to the messageId).
    expect(problemsOf(parseLedgerMessage({ entries }))).toEqual([
      'batchId must be a non-empty string, got nothing',
    ]);
    expect(problemsOf(parseLedgerMessage({ batchId: 'B'.repeat(101), entries }))).toEqual([
      'batchId must be at most 100 bytes in UTF-8 JSON, escapes included, got 101',
    ]);
  });

  it.each<[string, unknown]>([
    ['empty', ''],
    ['a number', 42],
  ])('fails a batchId that is %s', (_case, batchId) => {
    expect(problemsOf(parseLedgerMessage({ batchId, entries }))).toEqual([
      `batchId must be a non-empty string, got ${JSON.stringify(batchId)}`,
    ]);
  });

  it('accepts an empty batch', () => {
    expect(valueOf(parseLedgerMessage({ batchId: 'B-0', entries: [] }))).toEqual({
      batchId: 'B-0',
      entries: [],
    });
  });

  it('reports one invalid entry alone, by its index, and lets the others through', () => {
    const broken = withData(VALID.TransactionAdded, { sku: 'SKU-1', quantity: 0, unitPrice: 1250 });
    const results = entriesOf(
      parseLedgerMessage({
        batchId: 'B-1',
        entries: [
          VALID.OrderCreated,
          VALID.TransactionAmended,
          VALID.OrderDeleted,
          broken,
          VALID.TransactionAdded,
        ],
      }),
    );
    expect(results.map((result) => result.ok)).toEqual([true, true, true, false, true]);
    expect(problemsOf(results[3])).toEqual(['entries[3].data.quantity must be an integer >= 1, got 0']);
    expect(valueOf(results[4])).toEqual(VALID.TransactionAdded);
  });

  it('reports an entry that is not an object by its index', () => {
    const results = entriesOf(parseLedgerMessage({ batchId: 'B-1', entries: [VALID.OrderCreated, null] }));
    expect(results[0].ok).toBe(true);
    expect(problemsOf(results[1])).toEqual(['entries[1] must be a JSON object, got null']);
  });

  it('reports several problems of several entries, each with its own path', () => {
    const results = entriesOf(
      parseLedgerMessage({
        batchId: 'B-1',
        entries: [
          { ...VALID.OrderCreated, orderId: 'O#1' },
          { ...VALID.TransactionAdded, sequence: -1 },
        ],
      }),
    );
    expect(problemsOf(results[0])).toEqual(['entries[0].orderId must not contain / \\ ? or #, got "O#1"']);
    expect(problemsOf(results[1])).toEqual(['entries[1].sequence must be an integer >= 1, got -1']);
  });
});

describe('parseEntryMessage', () => {
  const raw = VALID.TransactionAdded;
  it.each<[string, unknown]>([
    ['JSON text', JSON.stringify(raw)],
    ['a Buffer', Buffer.from(JSON.stringify(raw))],
    ['a Uint8Array', new TextEncoder().encode(JSON.stringify(raw))],
    ['already parsed JSON', raw],
  ])('parses an entry that arrives as %s', (_case, body) => {
    expect(valueOf(parseEntryMessage(body))).toEqual(raw);
  });

  it('fails a body that is not JSON', () => {
    expect(problemsOf(parseEntryMessage('{"transactionId":'))[0]).toMatch(/^body is not valid JSON: /);
  });

  it('names broken fields without a path prefix', () => {
    expect(problemsOf(parseEntryMessage(JSON.stringify({ ...raw, sequence: 0 })))).toEqual([
      'sequence must be an integer >= 1, got 0',
    ]);
  });
});
