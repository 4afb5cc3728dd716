import type { Scope } from '../schemas/health.ts';
import { SandboxError } from './http/sandbox-error.ts';
import type { ApiKeyRecord, SandboxState } from './state.ts';

const KEY_FORM = /^service_([A-Za-z0-9]+)_([A-Za-z0-9]+)$/;

/**
 * Spec part 5: the key travels in `X-API-Key` only. There is no credential cache, so a revoked key
 * fails on the very next request. Messages name the likely mistake but never echo the key.
 */
export function authenticate(state: SandboxState, headers: Headers): ApiKeyRecord {
  const raw = headers.get('x-api-key');
  if (raw === null || raw === '') {
    const hint = headers.has('authorization')
      ? 'The key was sent in Authorization; send it in the X-API-Key header, without a Bearer prefix.'
      : 'Send the key in the X-API-Key header.';
    throw new SandboxError('INVALID_API_KEY', `Missing API key. ${hint}`);
  }
  const match = KEY_FORM.exec(raw);
  if (!match) {
    throw new SandboxError('INVALID_API_KEY', 'Malformed API key: expected service_<key_id>_<secret> with no spaces, line breaks or prefix.');
  }
  const key = state.keys.get(match[1] ?? '');
  if (!key || key.apiKey !== raw || key.revoked) {
    throw new SandboxError('INVALID_API_KEY', 'Unknown, revoked or rotated API key.');
  }
  return key;
}

/** Spec part 5 rule 4: 403 with the required scope and what the key has. */
export function requireScope(key: ApiKeyRecord, scope: Scope | null): void {
  if (scope === null || key.scopes.includes(scope)) return;
  throw new SandboxError('INSUFFICIENT_SCOPE', `This route needs the scope ${scope}, which the key does not have.`, {
    details: { required_scope: scope, granted_scopes: [...key.scopes] },
  });
}
