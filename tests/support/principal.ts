/** What App Service authentication puts in front of a request it let in (src/functions/http/actor.ts). */
import type { Platform } from '../../src/functions/http/actor';

/** App Service with authentication on, as `WEBSITE_AUTH_ENABLED=True` says. */
export const EASY_AUTH: Platform = { kind: 'app-service', authentication: true };
/** App Service with no identity provider: keys only. */
export const KEYS_ONLY: Platform = { kind: 'app-service', authentication: false };

/** The headers the platform injects for a signed-in caller holding `roles` (Learn, "Work with user identities"). */
export function signedIn(name: string, roles: readonly string[]): Record<string, string> {
  const principal = {
    auth_typ: 'aad',
    name_typ: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
    role_typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
    claims: [{ typ: 'name', val: name }, ...roles.map((role) => ({ typ: 'roles', val: role }))],
  };
  return {
    'x-ms-client-principal': Buffer.from(JSON.stringify(principal), 'utf8').toString('base64'),
    'x-ms-client-principal-name': name,
    'x-ms-client-principal-idp': 'aad',
  };
}
