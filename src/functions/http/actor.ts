/**
 * Who is calling an operator or money-moving function, and whether they may: taken only from what the
 * platform vouches for.
 *
 * - With App Service authentication ("Easy Auth", Microsoft Entra ID) on, the platform injects
 *   `X-MS-CLIENT-PRINCIPAL` (base64 JSON whose `claims` hold the app roles, type `roles`) and
 *   `X-MS-CLIENT-PRINCIPAL-NAME`, and "external requests aren't allowed to set these headers, so
 *   they're present only if set by App Service" (Microsoft Learn, "Work with user identities in Azure
 *   App Service authentication"). Whether it is on, the platform says too: it injects
 *   `WEBSITE_AUTH_ENABLED`, read-only (Learn, "Environment variables and app settings in Azure App
 *   Service", Authentication & Authorization). Then the functions take no key (authLevel
 *   `anonymous`: "unless the HTTP authorization level ... is set to anonymous, requests must include
 *   an API key", Learn, functions-bindings-http-webhook-trigger), the platform refuses anyone not
 *   signed in, and the app role decides: `Operations.Read` to read, `Operations.Write` to change.
 * - With it off, those headers are whatever the caller wrote, so they are ignored: the function key
 *   (reads) or the admin key (writes), checked by the host, is the only way in, and that is who the
 *   audit names.
 * - In the embedded host (`npm start -- --serve`, the tests) no key is checked, as `func start`
 *   checks none: the caller is `local`.
 */
import type { HttpRequest, HttpResponseInit } from '@azure/functions';
import type { Actor } from '../../services/operations/operations-journal';

export const PRINCIPAL_HEADER = 'x-ms-client-principal';
export const PRINCIPAL_NAME_HEADER = 'x-ms-client-principal-name';
export const PRINCIPAL_ID_HEADER = 'x-ms-client-principal-id';

/** The app roles of the Entra app registration (docs/deploy.md, "Operator sign-in"). */
export const ROLE = { read: 'Operations.Read', write: 'Operations.Write' } as const;
export type Role = (typeof ROLE)[keyof typeof ROLE];

/** What stands in front of the functions and what it vouches for. */
export type Platform = { kind: 'app-service'; authentication: boolean } | { kind: 'local' };

/** The platform as App Service describes it to the process: `WEBSITE_AUTH_ENABLED` is `True` when on. */
export function platformOf(env: Readonly<Record<string, string | undefined>>): Platform {
  return { kind: 'app-service', authentication: env.WEBSITE_AUTH_ENABLED?.trim().toLowerCase() === 'true' };
}

export const LOCAL_PLATFORM: Platform = { kind: 'local' };

/** A caller let in, as the audit and the saga record name them. */
export type Caller = Actor;

export type Authorization = { ok: true; caller: Caller } | { ok: false; response: HttpResponseInit };

/**
 * The key the host asks for: none when the platform authenticates (the role is checked here), else
 * the function key to read and the admin key to change anything.
 */
export function authLevelFor(platform: Platform, role: Role): 'anonymous' | 'function' | 'admin' {
  if (platform.kind === 'app-service' && platform.authentication) return 'anonymous';
  return role === ROLE.write ? 'admin' : 'function';
}

interface ClientPrincipal {
  claims: Array<{ typ: string; val: string }>;
  roleType: string | null;
  nameType: string | null;
}

/** The decoded `X-MS-CLIENT-PRINCIPAL`, or null when it is missing or not what the platform writes. */
export function clientPrincipalOf(header: string | null): ClientPrincipal | null {
  if (header === null || header.trim() === '') return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof decoded !== 'object' || decoded === null) return null;
  const { claims, role_typ: roleType, name_typ: nameType } = decoded as Record<string, unknown>;
  if (!Array.isArray(claims)) return null;
  return {
    claims: claims.flatMap((claim: unknown) => {
      const { typ, val } = (claim ?? {}) as Record<string, unknown>;
      return typeof typ === 'string' && typeof val === 'string' ? [{ typ, val }] : [];
    }),
    roleType: typeof roleType === 'string' ? roleType : null,
    nameType: typeof nameType === 'string' ? nameType : null,
  };
}

/** Entra puts app roles in `roles` claims; the principal also names its role claim type (`role_typ`). */
function rolesOf(principal: ClientPrincipal): string[] {
  const types = new Set(['roles', ...(principal.roleType === null ? [] : [principal.roleType])]);
  return principal.claims.filter((claim) => types.has(claim.typ)).map((claim) => claim.val);
}

function nameOf(request: Pick<HttpRequest, 'headers'>, principal: ClientPrincipal): string | null {
  const header = request.headers.get(PRINCIPAL_NAME_HEADER)?.trim();
  if (header) return header;
  const types = ['name', 'preferred_username', ...(principal.nameType === null ? [] : [principal.nameType])];
  const claimed = principal.claims.find((claim) => types.includes(claim.typ) && claim.val.trim() !== '');
  if (claimed !== undefined) return claimed.val.trim();
  return request.headers.get(PRINCIPAL_ID_HEADER)?.trim() || null;
}

/** Whether the caller may act in `role`, and who they are, from what the platform vouches for alone. */
export function authorize(
  request: Pick<HttpRequest, 'headers'>,
  platform: Platform,
  role: Role,
): Authorization {
  if (platform.kind === 'local') {
    return { ok: true, caller: { actor: 'local', vouchedBy: 'the embedded host, which checks no key' } };
  }
  if (!platform.authentication) {
    const key = role === ROLE.write ? 'admin-key' : 'function-key';
    return {
      ok: true,
      caller: {
        actor: key,
        vouchedBy: `the ${key === 'admin-key' ? 'admin' : 'function'} key; no identity provider is configured (WEBSITE_AUTH_ENABLED is not true), so X-MS-CLIENT-PRINCIPAL headers are not believed`,
      },
    };
  }
  const principal = clientPrincipalOf(request.headers.get(PRINCIPAL_HEADER));
  if (principal === null) {
    return {
      ok: false,
      response: {
        status: 401,
        jsonBody: {
          error:
            "sign in through the app's Microsoft Entra ID authentication: no client principal came with the request",
        },
      },
    };
  }
  const name = nameOf(request, principal) ?? 'unnamed';
  if (!rolesOf(principal).includes(role)) {
    return {
      ok: false,
      response: {
        status: 403,
        jsonBody: { error: `${name} does not hold the app role ${role}, which this call needs` },
      },
    };
  }
  return {
    ok: true,
    caller: {
      actor: `entra:${name}`,
      vouchedBy: `App Service authentication (Microsoft Entra ID), app role ${role}`,
    },
  };
}
