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

/**
 * A dependency refused the app's identity (Service Bus `UnauthorizedAccess`, Cosmos DB 401/403): the
 * role the call needs is not in effect for it yet. A new role assignment can take a while to apply
 * (Microsoft Learn, "Troubleshoot Azure RBAC": "it can take up to 10 minutes for changes to take
 * effect"; "Authorize access to blobs using Microsoft Entra ID": "Azure role assignments can take up
 * to 30 minutes to propagate"), so this is waited out like any transient failure. The message names
 * the role and the resource: when the wait runs out it is the reason an operator reads.
 */
export class AuthorizationPendingError extends TransientError {
  constructor(
    /** The built-in role the call needs, e.g. `Azure Service Bus Data Sender`. */
    readonly role: string,
    /** Where the role must be assigned, e.g. `queue parked of namespace x.servicebus.windows.net`. */
    readonly resource: string,
    /** What failed, with the service's own words. */
    failure: string,
    options?: { cause?: unknown },
  ) {
    super(
      'authorization-pending',
      `${failure}; the app's identity needs the role ${role} on ${resource}: a new role ` +
        'assignment can take up to 30 minutes to take effect, and past that it is missing',
      options,
    );
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
