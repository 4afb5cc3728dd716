// Who may see the dashboard and act on it: a token (first visit by `?token=`, then a session
// cookie), HTTP Basic, or the user's own `authorize`; and the CSRF tokens of the action forms.
// Secrets are compared as SHA-256 digests with timingSafeEqual: constant time whatever their lengths.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { ConfigurationError } from '../errors/integration-error.ts';
import { createSessions } from './sessions.ts';

/** What a request asks to do: `view` for every read, else the action's name. */
export type DashboardAction = 'view' | 'retry' | 'retry-dead' | 'purge' | 'webhook-test' | 'acknowledge-missed';

/** How the dashboard lets people in (one of three). */
export type DashboardAuth =
  | {
      token: string;
      /**
       * The `?token=` link signs in once (a second visit gets a page saying it was used), and the
       * token is not taken as a bearer: what the CLI does with the random token it prints, so that
       * a link seen in scrollback or a log lets nobody in. @default false
       */
      signInOnce?: boolean;
    }
  | { basic: { username: string; password: string } }
  | { authorize: (request: Request, action: DashboardAction) => boolean | Promise<boolean> };

/** The way in that is configured, as the sign-in page names it. */
export type WayIn = 'token' | 'token-once' | 'basic' | 'authorize';

/** The outcome of checking a request. */
export type AuthResult =
  | { ok: true; actor: string; setCookie?: string; redirectTo?: string; session?: boolean }
  | { ok: false; status: 401 | 403; challenge?: string; linkUsed?: boolean };

export const SESSION_COOKIE = 'integration_dashboard_session';
export const CSRF_COOKIE = 'integration_dashboard_csrf';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
/** Constant-time equality of two strings of any lengths. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

export function isHttps(request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
}

export function cookieHeader(request: Request, name: string, value: string, path: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${isHttps(request) ? '; Secure' : ''}`;
}

/** Checks the `auth` option at construction and returns the request check, sessions and a CSRF key. */
export function createAuth(auth: DashboardAuth | undefined, cookiePath: string, clock: Clock, sessionHours: number) {
  if (!auth || typeof auth !== 'object') {
    throw new ConfigurationError(
      'createDashboard needs { auth }: { token }, { basic: { username, password } } or { authorize(request, action) }. The dashboard is never open without one.',
    );
  }
  const kinds = ['token', 'basic', 'authorize'].filter((kind) => kind in auth);
  if (kinds.length > 1) throw new ConfigurationError(`createDashboard: auth takes one of token, basic or authorize, not ${kinds.join(' and ')}.`);
  let check: (request: Request, action: DashboardAction) => Promise<AuthResult>;
  let way: WayIn;
  const sessions = createSessions(clock, sessionHours * 3_600_000);
  const sessionSeconds = Math.max(1, Math.round(sessionHours * 3600));
  // Derived from the secret where there is one, so that every process serving the dashboard
  // accepts the forms of the others; random (per process) with `authorize`.
  let csrfKey: Buffer;
  if ('token' in auth) {
    const token = auth.token;
    if (typeof token !== 'string' || token === '') throw new ConfigurationError('createDashboard: auth.token must be a non-empty string (a random one of 32 characters or more).');
    const once = auth.signInOnce === true;
    way = once ? 'token-once' : 'token';
    let linkUsed = false;
    csrfKey = createHmac('sha256', token).update('integration-sdk dashboard csrf v1').digest();
    check = async (request) => {
      const url = new URL(request.url);
      const offered = url.searchParams.get('token');
      const session = cookieOf(request, SESSION_COOKIE);
      if (offered !== null && request.method === 'GET') {
        if (!sameSecret(offered, token)) return { ok: false, status: 401 };
        url.searchParams.delete('token');
        const redirectTo = `${url.pathname}${url.search}`;
        if (once && linkUsed) {
          // The browser that used it is still in; anyone else is told the link is spent.
          return sessions.valid(session) ? { ok: true, actor: 'token', redirectTo } : { ok: false, status: 401, linkUsed: true };
        }
        linkUsed = true;
        return { ok: true, actor: 'token', setCookie: cookieHeader(request, SESSION_COOKIE, sessions.start(), cookiePath, sessionSeconds), redirectTo };
      }
      const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
      if (bearer !== undefined) return !once && sameSecret(bearer, token) ? { ok: true, actor: 'token' } : { ok: false, status: 401 };
      return sessions.valid(session) ? { ok: true, actor: 'token', session: true } : { ok: false, status: 401 };
    };
  } else if ('basic' in auth) {
    const { username, password } = auth.basic ?? ({} as { username?: string; password?: string });
    if (typeof username !== 'string' || username === '' || typeof password !== 'string' || password === '') {
      throw new ConfigurationError('createDashboard: auth.basic needs a non-empty username and password.');
    }
    way = 'basic';
    csrfKey = createHmac('sha256', password).update(`integration-sdk dashboard csrf v1:${username}`).digest();
    const challenge = 'Basic realm="integration-sdk dashboard", charset="UTF-8"';
    check = async (request) => {
      const encoded = /^Basic\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
      const decoded = encoded === undefined ? '' : Buffer.from(encoded, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const [user, pass] = colon < 0 ? ['', ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
      // Both compared every time: the answer tells nothing about which part was wrong.
      const userOk = sameSecret(user, username);
      const passOk = sameSecret(pass, password);
      return userOk && passOk ? { ok: true, actor: username } : { ok: false, status: 401, challenge };
    };
  } else if ('authorize' in auth && typeof auth.authorize === 'function') {
    const authorize = auth.authorize;
    way = 'authorize';
    csrfKey = randomBytes(32);
    check = async (request, action) => {
      let allowed = false;
      try {
        allowed = (await authorize(request, action)) === true;
      } catch {
        allowed = false;
      }
      if (allowed) return { ok: true, actor: 'authorize' };
      return { ok: false, status: action === 'view' ? 401 : 403 };
    };
  } else {
    throw new ConfigurationError('createDashboard: auth must be { token }, { basic: { username, password } } or { authorize(request, action) }.');
  }

  return {
    check,
    way,
    /** How long a session and its CSRF cookie last, in seconds. */
    sessionSeconds,
    /** Ends the request's session; the Set-Cookie header that clears its cookie. */
    signOut(request: Request): string {
      sessions.end(cookieOf(request, SESSION_COOKIE));
      return cookieHeader(request, SESSION_COOKIE, '', cookiePath, 0);
    },
    /** The form token for the CSRF cookie `nonce`. */
    csrfToken: (nonce: string) => createHmac('sha256', csrfKey).update(nonce).digest('base64url'),
    newNonce: () => randomBytes(24).toString('base64url'),
  };
}
