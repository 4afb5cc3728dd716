// Whose state an item's fingerprint is: the service (base URL), the merchant and the key's stores,
// as health() reports them. A test-store key and the production key of one merchant never share.
import { createHash } from 'node:crypto';
import type { Health } from '../schemas/health.ts';

/** A short, stable id of (base URL, merchant_id, store_ids); store ids sorted, in lowercase. */
export function scopeOf(baseUrl: string, health: Pick<Health, 'merchant_id' | 'store_ids'>): string {
  const stores = [...health.store_ids].map((id) => id.toLowerCase()).sort();
  const described = JSON.stringify([baseUrl, health.merchant_id, stores.length === 0 ? '*' : stores]);
  return createHash('sha256').update(described).digest('hex').slice(0, 32);
}

/** The client's base URL without credentials: a userinfo part must not reach the state, nor split a scope. */
export function baseUrlOf(client: { baseUrl?: unknown }): string {
  const raw = client.baseUrl;
  if (typeof raw !== 'string') return '';
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return raw;
  }
}
