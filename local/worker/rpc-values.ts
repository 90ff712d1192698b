/**
 * How the Functions host turns a .NET binding value into RPC typed data
 * (azure-functions-host `src/WebJobs.Script.Grpc/MessageExtensions/GrpcMessageConversionExtensions.cs`,
 * `ToRpc`): null → no field set; `string` → `string`; `double` → `double`; `byte[]` → `bytes`;
 * anything else (an `int`, a `long`, a `DateTime`, a dictionary) → `json`, by Newtonsoft's
 * `JsonConvert.SerializeObject` (`ToRpcDefault`).
 */
import type { RpcTypedData } from './core-types';

/** A .NET value as a binding produces it, tagged with the CLR type that decides its conversion. */
export type DotNetValue =
  | { clr: 'string'; value: string | null | undefined }
  | { clr: 'int' | 'long'; value: number }
  | { clr: 'double'; value: number }
  /** A `DateTime` of kind Unspecified (what `DateTimeOffset.DateTime` returns): no offset. */
  | { clr: 'DateTime'; value: number }
  | { clr: 'DateTimeOffset'; value: number }
  | { clr: 'dictionary'; value: Readonly<Record<string, string | number | boolean>> }
  /** `DateTime.MaxValue` / `DateTimeOffset.MaxValue`: the `ExpiresAt` of a message that never expires. */
  | { clr: 'DateTime.MaxValue' | 'DateTimeOffset.MaxValue' };

/** The 7-digit fraction .NET keeps and a JS date cannot hold. */
const MAX_VALUE = '9999-12-31T23:59:59.9999999';

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/**
 * Newtonsoft's default date format, `yyyy'-'MM'-'dd'T'HH':'mm':'ss.FFFFFFFK`: the fraction without
 * trailing zeros (and without its dot when zero); `K` is empty for an Unspecified `DateTime` and
 * `+00:00` for a UTC `DateTimeOffset`. Node has milliseconds, .NET ticks: the fraction has at most 3 digits.
 */
export function newtonsoftDate(epochMs: number, withOffset: boolean): string {
  const date = new Date(epochMs);
  const fraction = pad(date.getUTCMilliseconds(), 3).replace(/0+$/, '');
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}` +
    (fraction === '' ? '' : `.${fraction}`) +
    (withOffset ? '+00:00' : '')
  );
}

export function toRpc(value: DotNetValue): RpcTypedData {
  switch (value.clr) {
    case 'string':
      return value.value === null || value.value === undefined ? {} : { string: value.value };
    case 'double':
      return { double: value.value };
    case 'int':
    case 'long':
      return { json: JSON.stringify(value.value) };
    case 'DateTime':
      return { json: JSON.stringify(newtonsoftDate(value.value, false)) };
    case 'DateTimeOffset':
      return { json: JSON.stringify(newtonsoftDate(value.value, true)) };
    case 'dictionary':
      return { json: JSON.stringify(value.value) };
    case 'DateTime.MaxValue':
      return { json: JSON.stringify(MAX_VALUE) };
    case 'DateTimeOffset.MaxValue':
      return { json: JSON.stringify(`${MAX_VALUE}+00:00`) };
  }
}
