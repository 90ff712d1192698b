/**
 * The host.json settings the embedded host enforces, as the deployed host.json sets them (a test,
 * tests/contract/host-settings.test.ts, holds the two equal). A TimeSpan there is `hh:mm:ss`.
 * - functionTimeout: learn.microsoft.com/azure/azure-functions/functions-host-json#functiontimeout
 *   (a function still running then is cancelled: Microsoft.Azure.WebJobs.Host's
 *   FunctionTimeoutException, "Timeout value of ... was exceeded by function ...").
 * - extensions.serviceBus.maxAutoLockRenewalDuration: learn.microsoft.com/azure/azure-functions/
 *   functions-bindings-service-bus#hostjson-settings (default 00:05:00); the host renews message
 *   and session locks for at most this long.
 */
export const HOST_SETTINGS = {
  functionTimeout: '00:05:00',
  maxAutoLockRenewalDuration: '00:05:00',
} as const;

/** Milliseconds of a host.json TimeSpan `[d.]hh:mm:ss[.fffffff]`. */
export function timeSpanMs(text: string): number {
  const match = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/.exec(text);
  if (!match) throw new Error(`not a TimeSpan (d.hh:mm:ss.fffffff): ${JSON.stringify(text)}`);
  const [, days, hours, minutes, seconds, fraction] = match;
  const wholeSeconds =
    Number(days ?? 0) * 86_400 + Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds);
  return wholeSeconds * 1000 + Math.round(Number(`0.${fraction ?? '0'}`) * 1000);
}

export const FUNCTION_TIMEOUT_MS = timeSpanMs(HOST_SETTINGS.functionTimeout);
export const MAX_AUTO_LOCK_RENEWAL_MS = timeSpanMs(HOST_SETTINGS.maxAutoLockRenewalDuration);
