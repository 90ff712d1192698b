/**
 * Every failure the app raises is one of two kinds, because retry and compensation depend on it:
 * a transient failure may clear if the same thing is tried again; a permanent one never will.
 */
export type FailureKind = 'transient' | 'permanent';

export abstract class AppError extends Error {
  abstract readonly kind: FailureKind;
  /** A short, stable machine-readable code, e.g. `store-throttled`, `out-of-stock`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

export class TransientError extends AppError {
  readonly kind = 'transient' as const;
}

export class PermanentError extends AppError {
  readonly kind = 'permanent' as const;
}

/** A setting is missing or malformed; raised once at start, naming the setting. */
export class ConfigurationError extends PermanentError {
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super('bad-setting', `setting ${setting} ${problem}`);
  }
}

/** Unknown errors are treated as transient: retrying a bug costs a few deliveries, dropping data costs more. */
export function failureKindOf(error: unknown): FailureKind {
  return error instanceof AppError ? error.kind : 'transient';
}

/** The text of anything thrown: an Error's message, anything else as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
