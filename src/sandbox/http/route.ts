import type { Scope } from '../../schemas/health.ts';
import type { Clock } from '../../clock.ts';
import type { Platform } from '../platform/orders.ts';
import type { DeliveryEngine } from '../webhooks/delivery-engine.ts';
import type { ReceiverPolicy } from '../webhooks/ssrf.ts';
import type { ApiKeyRecord, SandboxState } from '../state.ts';
import type { Reply } from './exchange.ts';

/** What the core hands every route handler once auth, rate limit and scope have passed. */
export interface RouteContext {
  state: SandboxState;
  key: ApiKeyRecord;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body (undefined when the request had none). */
  body: unknown;
  services: Services;
}

export interface Services {
  clock: Clock;
  deliveries: DeliveryEngine;
  receivers: ReceiverPolicy;
  /** The platform's side, for the `/_sandbox` controls. */
  platform: Platform;
}

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Relative to `/integration/v1` (or `/_sandbox` for a control); `:name` segments become params. */
  path: string;
  /** The scope of spec part 1; null for health and the controls. */
  scope: Scope | null;
  handler: (ctx: RouteContext) => Reply | Promise<Reply>;
}
