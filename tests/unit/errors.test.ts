/** The two kinds of failure and the helpers that classify and describe anything thrown (src/domain/errors.ts). */
import {
  AppError,
  ConfigurationError,
  PermanentError,
  TransientError,
  errorMessage,
  failureKindOf,
} from '../../src/domain/errors';
import { compareText } from '../../src/domain/compare';

describe('AppError', () => {
  it('keeps the code, the message, the cause and the class name', () => {
    const cause = new Error('root');
    const transient = new TransientError('store-throttled', 'slow down', { cause });
    expect(transient).toBeInstanceOf(AppError);
    expect(transient).toBeInstanceOf(Error);
    expect(transient.kind).toBe('transient');
    expect(transient.code).toBe('store-throttled');
    expect(transient.message).toBe('slow down');
    expect(transient.cause).toBe(cause);
    expect(transient.name).toBe('TransientError');

    const permanent = new PermanentError('out-of-stock', 'none left');
    expect(permanent.kind).toBe('permanent');
    expect(permanent.name).toBe('PermanentError');
    expect(permanent.cause).toBeUndefined();
  });

  it('ConfigurationError is permanent and names the setting', () => {
    const error = new ConfigurationError('ORDERS_QUEUE', 'must be set');
    expect(error).toBeInstanceOf(PermanentError);
    expect(error.kind).toBe('permanent');
    expect(error.code).toBe('bad-setting');
    expect(error.setting).toBe('ORDERS_QUEUE');
    expect(error.message).toBe('setting ORDERS_QUEUE must be set');
    expect(error.name).toBe('ConfigurationError');
  });
});

describe('failureKindOf', () => {
  it("is the error's own kind for an AppError and transient for anything else", () => {
    expect(failureKindOf(new PermanentError('x', 'y'))).toBe('permanent');
    expect(failureKindOf(new ConfigurationError('S', 'bad'))).toBe('permanent');
    expect(failureKindOf(new TransientError('x', 'y'))).toBe('transient');
    expect(failureKindOf(new Error('plain'))).toBe('transient');
    expect(failureKindOf('text')).toBe('transient');
    expect(failureKindOf(undefined)).toBe('transient');
  });
});

describe('errorMessage', () => {
  it("is an Error's message, and anything else as a string", () => {
    expect(errorMessage(new TypeError('bad type'))).toBe('bad type');
    expect(errorMessage('text')).toBe('text');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errorMessage({ message: 'not an Error' })).toBe('[object Object]');
  });
});

describe('compareText', () => {
  it('orders by code unit: negative, zero, positive', () => {
    expect(compareText('a', 'b')).toBe(-1);
    expect(compareText('b', 'a')).toBe(1);
    expect(compareText('a', 'a')).toBe(0);
    // Code-unit order, not locale order: 'B' (0x42) sorts before 'a' (0x61).
    expect(['a', 'B', 'ä', 'A'].sort(compareText)).toEqual(['A', 'B', 'a', 'ä']);
    expect(compareText('ab', 'a')).toBe(1);
    expect(compareText('', 'a')).toBe(-1);
  });
});
