/**
 * Who made a money-moving or operator call (cancel, review, replay), for the saga record and the
 * replay's trace. Those functions take the admin key (`authLevel: 'admin'`), not a function key.
 *
 * With the platform's authentication (App Service / Functions "Easy Auth" with Microsoft Entra ID)
 * in front, the platform passes the signed-in principal in `X-MS-CLIENT-PRINCIPAL-NAME` and
 * `-ID`; outside requests cannot set those headers (Learn: "Work with user identities in Azure App
 * Service authentication"). Without it, the only way in is the admin key, and that is what is named.
 */
import type { HttpRequest } from '@azure/functions';

export const PRINCIPAL_NAME_HEADER = 'x-ms-client-principal-name';
export const PRINCIPAL_ID_HEADER = 'x-ms-client-principal-id';

/** `entra:<name or object id>` for a platform-authenticated caller, else `admin-key`. */
export function actorOf(request: Pick<HttpRequest, 'headers'>): string {
  const name = request.headers.get(PRINCIPAL_NAME_HEADER)?.trim();
  if (name) return `entra:${name}`;
  const id = request.headers.get(PRINCIPAL_ID_HEADER)?.trim();
  if (id) return `entra:${id}`;
  return 'admin-key';
}
