import type { Health } from '../../schemas/health.ts';
import { isoAt } from '../clock.ts';
import type { Route } from '../http/route.ts';

/** Spec 4.1: no scope; tells the caller who the key is. */
export const healthRoutes: Route[] = [
  {
    method: 'GET',
    path: '/health',
    scope: null,
    handler: ({ key, services }) => {
      const body: Health = { status: 'ok', merchant_id: key.merchantId, store_ids: [...key.storeIds], scopes: [...key.scopes], ts: isoAt(services.clock) };
      return { status: 200, body };
    },
  },
];
