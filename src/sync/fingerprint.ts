// What "changed" means: a hash of the item exactly as it would be sent (the checked plain copy),
// fields in a fixed order, numbers as JSON writes them (12.340 and 12.34 are one number), plus the
// version of these rules, so that an SDK upgrade that changes what is sent resends everything.
import * as crypto from 'node:crypto';
import type { SyncKind } from './state.ts';

/** Bump when what is sent, or how it is hashed, changes: every item is then sent again once. */
export const FINGERPRINT_RULES_VERSION = 1;

/** JSON with object keys sorted at every depth; the copy holds only JSON values (checked before). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const field = record[key];
    if (field === undefined) continue;
    out += `${first ? '' : ','}${quoted(key)}:${canonicalJson(field)}`;
    first = false;
  }
  return `${out}}`;
}

// Items share their field names: each is quoted once (a bounded cache, for inputs with odd keys).
const QUOTED = new Map<string, string>();
function quoted(key: string): string {
  let text = QUOTED.get(key);
  if (text === undefined) {
    text = JSON.stringify(key);
    if (QUOTED.size < 1000) QUOTED.set(key, text);
  }
  return text;
}

type OneShotHash = (algorithm: string, data: string, encoding: 'base64url') => string;
// `crypto.hash` (Node ≥ 21.7) hashes in one call, without a Hash object per item.
const oneShot = ((crypto as { hash?: unknown }).hash as OneShotHash | undefined) ?? ((algorithm: string, data: string) => crypto.createHash(algorithm).update(data).digest('base64url'));

/** 128 bits of SHA-256, base64url: 22 characters a row. */
export function fingerprintOf(kind: SyncKind, checkedItem: unknown): string {
  return oneShot('sha256', `${FINGERPRINT_RULES_VERSION}:${kind}:${canonicalJson(checkedItem)}`, 'base64url').slice(0, 22);
}
