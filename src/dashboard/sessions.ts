// The sessions of `{ token }` sign-ins: a fresh random value per sign-in, kept in this process with
// its expiry, never derived from the token, so that a cookie seen once is no key for life; signing
// out ends it. Kept as SHA-256 digests: a heap dump shows no live cookie.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';

/** More than any team signs in within a session's life: past it, the oldest sessions end first. */
const MAX_SESSIONS = 10_000;

const keyOf = (value: string) => createHash('sha256').update(value, 'utf8').digest('base64url');

export interface Sessions {
  /** A new session: the cookie's value. */
  start(): string;
  /** Whether `value` is a session that has not expired nor been ended. */
  valid(value: string | undefined): boolean;
  /** Ends the session `value` (signing out). */
  end(value: string | undefined): void;
}

export function createSessions(clock: Clock, lifetimeMs: number): Sessions {
  // Insertion order is start order: the first entries are the oldest.
  const expiries = new Map<string, number>();
  const forgetExpired = (now: number) => {
    for (const [key, expiresAt] of expiries) if (expiresAt <= now) expiries.delete(key);
  };
  return {
    start() {
      const now = clock.now();
      forgetExpired(now);
      while (expiries.size >= MAX_SESSIONS) expiries.delete(expiries.keys().next().value!);
      const value = randomBytes(32).toString('base64url');
      expiries.set(keyOf(value), now + lifetimeMs);
      return value;
    },
    valid(value) {
      if (value === undefined || !/^[A-Za-z0-9_-]{43}$/.test(value)) return false;
      const key = keyOf(value);
      const expiresAt = expiries.get(key);
      if (expiresAt === undefined) return false;
      if (expiresAt > clock.now()) return true;
      expiries.delete(key);
      return false;
    },
    end(value) {
      if (value !== undefined) expiries.delete(keyOf(value));
    },
  };
}
