import type { LimitedRequest } from '../../transport/rate-limiter.ts';

/**
 * Interactive calls (`health`, `orders.*`, `loyalty.*`, `webhooks.*`, anything else) go ahead of bulk
 * batches (`catalog.*`, `stock.set`) of any tenant: a loyalty credit at the till does not wait behind
 * a nightly catalog.
 */
export type RequestKind = 'interactive' | 'bulk';

/** The bulk routes of the spec (4.2, 4.3): `catalog.upsertProducts` and `stock.set` batches. */
const BULK_ROUTES = new Set(['POST /products/bulk', 'PATCH /stock']);

/** A request the limiter was not told about (a caller of `acquire` that passes none) counts as interactive. */
export function kindOf(request: LimitedRequest | undefined): RequestKind {
  if (request === undefined) return 'interactive';
  return BULK_ROUTES.has(`${request.method.toUpperCase()} ${request.route}`) ? 'bulk' : 'interactive';
}

/** The kinds in the order they are served. */
export const KINDS_IN_ORDER: readonly RequestKind[] = ['interactive', 'bulk'];
