import type { Route } from '../http/route.ts';
import { healthRoutes } from './health.ts';
import { loyaltyCouponRoutes } from './loyalty-coupons.ts';
import { loyaltyPointsRoutes } from './loyalty-points.ts';
import { loyaltyReadRoutes } from './loyalty-read.ts';
import { orderRoutes } from './orders.ts';
import { productRoutes } from './products.ts';
import { stockRoutes } from './stock.ts';
import { webhookRoutes } from './webhooks.ts';

/** Every route of the service; anything else (POST /orders included) is 404 NOT_FOUND. */
export const ROUTES: readonly Route[] = [
  ...healthRoutes,
  ...productRoutes,
  ...stockRoutes,
  ...orderRoutes,
  ...webhookRoutes,
  ...loyaltyReadRoutes,
  ...loyaltyPointsRoutes,
  ...loyaltyCouponRoutes,
];
