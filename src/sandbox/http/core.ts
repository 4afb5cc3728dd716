import { authenticate, requireScope } from '../auth.ts';
import type { FaultKind, FaultPlan } from '../faults.ts';
import type { BucketSet } from '../rate-limit.ts';
import type { SandboxState } from '../state.ts';
import { json, toCoreResponse, type CoreRequest, type CoreResponse, type CoreResult } from './exchange.ts';
import type { Route, Services } from './route.ts';
import { matchRoute, PREFIX } from './router.ts';
import { errorResponse, SandboxError } from './sandbox-error.ts';

export interface CoreDeps {
  state: SandboxState;
  routes: readonly Route[];
  services: Services;
  buckets: { perKey: BucketSet | null; perIp: BucketSet | null };
  /** Read on every request, so `setFaults` takes effect at once. */
  faults: () => FaultPlan | null;
}

/** A request's answer from the emulated service; both adapters go through this one function. */
export type Core = (request: CoreRequest) => Promise<CoreResult>;

/**
 * The order of checks: feature flag (spec part 1: every route, health included), injected fault,
 * per-IP bucket, prefix, key, per-key bucket, route, scope, body, handler. Auth comes before
 * routing as behind a real gateway, so an unknown path with a bad key answers 401.
 */
export function createCore(deps: CoreDeps): Core {
  return async (request) => {
    let fault: FaultKind | null = null;
    try {
      if (!deps.state.featureEnabled) {
        throw new SandboxError('FEATURE_DISABLED', 'The Integration API is not enabled for this environment (sandbox feature flag is off).');
      }
      fault = deps.faults()?.next() ?? null;
      const early = earlyFault(fault);
      if (early) return early;
      deps.buckets.perIp?.take(request.ip, 'caller IP');
      const reply = await dispatch(deps, request);
      return lateFault(fault) ?? reply;
    } catch (error) {
      const answer = error instanceof SandboxError ? errorResponse(error) : internal(error);
      return lateFault(fault) ?? answer;
    }
  };
}

async function dispatch(deps: CoreDeps, request: CoreRequest): Promise<CoreResponse> {
  const url = new URL(request.url, 'http://sandbox.invalid');
  const method = request.method.toUpperCase();
  if (url.pathname !== PREFIX && !url.pathname.startsWith(`${PREFIX}/`)) throw notFound(method, url.pathname);
  const key = authenticate(deps.state, request.headers);
  deps.buckets.perKey?.take(key.keyId, 'API key');
  const match = matchRoute(deps.routes, method, url.pathname.slice(PREFIX.length));
  if (!match) throw notFound(method, url.pathname);
  requireScope(key, match.route.scope);
  const body = method === 'POST' || method === 'PATCH' ? parseBody(request.body) : undefined;
  const reply = await match.route.handler({ state: deps.state, key, params: match.params, query: url.searchParams, body, services: deps.services });
  return toCoreResponse(reply);
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new SandboxError('VALIDATION_ERROR', 'The body is not valid JSON.', { details: [{ path: '', message: 'is not valid JSON' }] });
  }
}

function notFound(method: string, path: string): SandboxError {
  const hint = method === 'POST' && path === `${PREFIX}/orders`
    ? ' POST /orders was removed in v1.1: orders reach the ERP through the order.created webhook.'
    : '';
  return new SandboxError('NOT_FOUND', `No route ${method} ${path}.${hint}`);
}

function internal(error: unknown): CoreResponse {
  const reason = error instanceof Error ? error.message : String(error);
  return errorResponse(new SandboxError('INTERNAL', `Unexpected sandbox failure: ${reason}`));
}

function earlyFault(fault: FaultKind | null): CoreResponse | null {
  switch (fault) {
    case 'error500':
      return errorResponse(new SandboxError('INTERNAL', 'Injected fault: transient internal failure (not processed).'));
    case 'error503':
      return errorResponse(new SandboxError('AUTH_UNAVAILABLE', 'Injected fault: authentication infrastructure unavailable (not processed).'));
    case 'error429':
      return errorResponse(new SandboxError('RATE_LIMITED', 'Injected fault: rate limited (not processed).', { headers: { 'retry-after': '1' } }));
    default:
      return null;
  }
}

function lateFault(fault: FaultKind | null): CoreResult | null {
  if (fault === 'processed500') return json(500, { error: { code: 'INTERNAL', message: 'Injected fault: the request was processed, then the answer failed.' } });
  if (fault === 'drop') return { dropped: true };
  return null;
}
