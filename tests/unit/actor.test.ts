/** Who is calling, from what the platform vouches for alone (src/functions/http/actor.ts). */
import {
  authLevelFor,
  authorize,
  clientPrincipalOf,
  platformOf,
  ROLE,
  type Platform,
} from '../../src/functions/http/actor';
import { EASY_AUTH, KEYS_ONLY, signedIn } from '../support/principal';

const request = (headers: Record<string, string>) => ({ headers: new Headers(headers) });

describe('what the platform says', () => {
  it('is on only when App Service sets WEBSITE_AUTH_ENABLED to true', () => {
    expect(platformOf({ WEBSITE_AUTH_ENABLED: 'True' })).toEqual(EASY_AUTH);
    expect(platformOf({ WEBSITE_AUTH_ENABLED: 'true' })).toEqual(EASY_AUTH);
    expect(platformOf({ WEBSITE_AUTH_ENABLED: 'False' })).toEqual(KEYS_ONLY);
    expect(platformOf({ WEBSITE_AUTH_ENABLED: '1' })).toEqual(KEYS_ONLY);
    expect(platformOf({})).toEqual(KEYS_ONLY);
  });

  it('asks the host for a key only where no identity provider is configured', () => {
    expect(authLevelFor(KEYS_ONLY, ROLE.read)).toBe('function');
    expect(authLevelFor(KEYS_ONLY, ROLE.write)).toBe('admin');
    expect(authLevelFor(EASY_AUTH, ROLE.write)).toBe('anonymous');
    expect(authLevelFor({ kind: 'local' }, ROLE.write)).toBe('admin');
  });
});

describe('authorize', () => {
  it('with authentication off, believes no principal header: the key is who called', () => {
    const spoofed = request({
      ...signedIn('mallory@contoso.com', [ROLE.write]),
      'x-ms-client-principal-id': 'x',
    });
    expect(authorize(spoofed, KEYS_ONLY, ROLE.write)).toMatchObject({
      ok: true,
      caller: { actor: 'admin-key' },
    });
    expect(authorize(spoofed, KEYS_ONLY, ROLE.read)).toMatchObject({
      ok: true,
      caller: { actor: 'function-key' },
    });
  });

  it('with authentication on, lets in the roles the principal holds, under the name the platform gave', () => {
    const both = request(signedIn('oncall@contoso.com', [ROLE.read, ROLE.write]));
    expect(authorize(both, EASY_AUTH, ROLE.write)).toMatchObject({
      ok: true,
      caller: { actor: 'entra:oncall@contoso.com' },
    });
    const reader = request(signedIn('reader@contoso.com', [ROLE.read]));
    expect(authorize(reader, EASY_AUTH, ROLE.read).ok).toBe(true);
    expect(authorize(reader, EASY_AUTH, ROLE.write)).toEqual({
      ok: false,
      response: {
        status: 403,
        jsonBody: {
          error: 'reader@contoso.com does not hold the app role Operations.Write, which this call needs',
        },
      },
    });
  });

  it('reads roles under the type the principal names (role_typ), and the name from its claims', () => {
    const principal = {
      auth_typ: 'aad',
      name_typ: 'preferred_username',
      role_typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
      claims: [
        { typ: 'preferred_username', val: 'svc@contoso.com' },
        { typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role', val: ROLE.write },
        { typ: 'roles', val: 42 },
      ],
    };
    const header = Buffer.from(JSON.stringify(principal)).toString('base64');
    expect(authorize(request({ 'x-ms-client-principal': header }), EASY_AUTH, ROLE.write)).toMatchObject({
      ok: true,
      caller: { actor: 'entra:svc@contoso.com' },
    });
  });

  it('with authentication on, refuses a request without a client principal the platform wrote', () => {
    const unvouched: Array<Record<string, string>> = [
      {},
      { 'x-ms-client-principal-name': 'mallory' },
      { 'x-ms-client-principal': 'not base64 json' },
      { 'x-ms-client-principal': Buffer.from('{"claims": "none"}').toString('base64') },
    ];
    for (const headers of unvouched) {
      expect(authorize(request(headers), EASY_AUTH, ROLE.read)).toMatchObject({
        ok: false,
        response: { status: 401 },
      });
    }
    expect(clientPrincipalOf(null)).toBeNull();
  });

  it('lets everyone in on the embedded host, as local', () => {
    const local: Platform = { kind: 'local' };
    expect(authorize(request({}), local, ROLE.write)).toMatchObject({ ok: true, caller: { actor: 'local' } });
  });
});
