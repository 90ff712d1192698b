/** What every HTTP function here does alike: JSON in, a use case's status and body out. */
import type { HttpRequest, HttpResponseInit } from '@azure/functions';
import type { ApiResult } from '../../services/fulfillment/orders-api';

export function respond(result: ApiResult): HttpResponseInit {
  return { status: result.status, jsonBody: result.body };
}

/** The request's JSON body: undefined when empty, `ok: false` when it is not JSON. */
export async function jsonBody(request: HttpRequest): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const text = await request.text();
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
