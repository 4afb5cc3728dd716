import * as z from 'zod/mini';
import type { KnownFields } from './known-fields.ts';

/** Spec 2.1: answer of GET /health. */
export const HealthSchema = z.looseObject({
  status: z.string(),
  merchant_id: z.string(),
  /** An empty array means every store of the merchant. */
  store_ids: z.array(z.string()),
  scopes: z.array(z.string()),
  ts: z.string(),
});
/** Answer of `client.health()`: `{ status, merchant_id, store_ids, scopes, ts }` (an empty `store_ids` means every store). */
export type Health = KnownFields<z.infer<typeof HealthSchema>>;

/** The scopes of spec part 5 (`orders:write` no longer exists). */
export type Scope = 'catalog:write' | 'stock:write' | 'orders:read' | 'webhooks:manage' | 'loyalty:read' | 'loyalty:write';
