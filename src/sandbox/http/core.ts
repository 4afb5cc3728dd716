import { BodyLimitError } from '../../bounded-body.ts';
import { authenticate, requireScope } from '../auth.ts';
import type { FaultKind, FaultPlan } from '../faults.ts';
import { safeLog, type SandboxRequestLog } from '../log.ts';
import type { BucketSet } from '../rate-limit.ts';
import type { SandboxState } from '../state.ts';
import { isDropped, json, toCoreResponse, type CoreRequest, type CoreResponse, type CoreResult } from './exchange.ts';
import type { Route, Services } from './route.ts';
import { CONTROL_PREFIX, matchRoute, PREFIX } from './router.ts';
import { errorResponse, SandboxError } from './sandbox-error.ts';

/** The largest body the sandbox reads: a full batch of 500 items is far below it. */
export const SANDBOX_MAX_BODY_BYTES = 5 * 1024 * 1024;

export interface CoreDeps {
  state: SandboxState;
  routes: readonly Route[];
  /** The `/_sandbox` controls, and the one key that may use them. */
  controls: { routes: readonly Route[]; keyId: string };
  services: Services;
  buckets: { perKey: BucketSet | null; perIp: BucketSet | null };
  /** Read on every request, so `setFaults` takes effect at once. */
  faults: () => FaultPlan | null;
  /** Told about every request answered. */
  log?: (entry: SandboxRequestLog) => void;
}

/** Where a request went: the route template for the log, once known. */
interface Trace {
  route: string;
}

/** A request's answer from the emulated service; both adapters go through this one function. */
export type Core = (request: CoreRequest) => Promise<CoreResult>;

/**
 * The order of checks: feature flag (spec part 1: every route, health included), injected fault,
 * per-IP bucket, prefix, key, per-key bucket, route, scope, body, handler. Auth comes before
 * routing as behind a real gateway, so an unknown path with a bad key answers 401. The
 * `/_sandbox` controls are no part of the service: key, route, body, handler, nothing else.
 */
export function createCore(deps: CoreDeps): Core {
  const log = safeLog(deps.log);
  const { clock } = deps.services;
  return async (request) => {
    const started = clock.now();
    const method = request.method.toUpperCase();
    const path = new URL(request.url, 'http://sandbox.invalid').pathname;
    const trace: Trace = { route: routeShape([...deps.routes, ...deps.controls.routes], path) };
    const result = path.startsWith(`${CONTROL_PREFIX}/`) ? await control(deps, request, trace) : await service(deps, request, trace);
    log({ type: 'request', method, route: trace.route, status: isDropped(result) ? null : result.status, ms: clock.now() - started });
    return result;
  };
}

async function control(deps: CoreDeps, request: CoreRequest, trace: Trace): Promise<CoreResult> {
  try {
    return await dispatch({ ...deps, routes: deps.controls.routes }, request, trace, CONTROL_PREFIX);
  } catch (error) {
    return error instanceof SandboxError ? errorResponse(error) : internal(error);
  }
}

async function service(deps: CoreDeps, request: CoreRequest, trace: Trace): Promise<CoreResult> {
  let fault: FaultKind | null = null;
  try {
    if (!deps.state.featureEnabled) {
      throw new SandboxError('FEATURE_DISABLED', 'The Integration API is not enabled for this environment (sandbox feature flag is off).');
    }
    fault = deps.faults()?.next() ?? null;
    const early = earlyFault(fault);
    if (early) return early;
    deps.buckets.perIp?.take(request.ip, 'caller IP');
    const reply = await dispatch(deps, request, trace, PREFIX);
    return lateFault(fault) ?? reply;
  } catch (error) {
    const answer = error instanceof SandboxError ? errorResponse(error) : internal(error);
    return lateFault(fault) ?? answer;
  }
}

async function dispatch(deps: CoreDeps, request: CoreRequest, trace: Trace, prefix: string): Promise<CoreResponse> {
  const url = new URL(request.url, 'http://sandbox.invalid');
  const method = request.method.toUpperCase();
  if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) throw notFound(deps.routes, method, url.pathname);
  const key = authenticate(deps.state, request.headers);
  if (prefix === PREFIX) deps.buckets.perKey?.take(key.keyId, 'API key');
  else if (key.keyId !== deps.controls.keyId) throw new SandboxError('INVALID_API_KEY', "The /_sandbox controls need the sandbox's full key.");
  const match = matchRoute(deps.routes, method, url.pathname.slice(prefix.length));
  if (!match) throw notFound(deps.routes, method, url.pathname);
  trace.route = `${prefix}${match.route.path}`;
  requireScope(key, match.route.scope);
  const body = method === 'POST' || method === 'PATCH' ? await readJsonBody(request) : undefined;
  const reply = await match.route.handler({ state: deps.state, key, params: match.params, query: url.searchParams, body, services: deps.services });
  return toCoreResponse(reply);
}

/** Spec part 4: bodies are JSON. Another declared type is refused before a byte of it is read. */
async function readJsonBody(request: CoreRequest): Promise<unknown> {
  const type = request.headers.get('content-type');
  if (type !== null && !isJson(type)) throw notJson();
  const text = await readWithinLimits(request);
  if (text.trim() === '') return undefined;
  if (type === null) throw notJson();
  return parseBody(text);
}

function isJson(contentType: string): boolean {
  return contentType.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function notJson(): SandboxError {
  return new SandboxError('VALIDATION_ERROR', 'The body must be sent as Content-Type: application/json.', {
    details: [{ path: '', message: 'Content-Type must be application/json' }],
  });
}

async function readWithinLimits(request: CoreRequest): Promise<string> {
  try {
    return await request.readBody();
  } catch (error) {
    if (!(error instanceof BodyLimitError)) throw error;
    const message = error.status === 413
      ? `The body is larger than the sandbox accepts (${SANDBOX_MAX_BODY_BYTES} bytes).`
      : 'The body did not arrive in time.';
    // The rest of the body stays unread: only closing the connection keeps it so.
    throw new SandboxError('VALIDATION_ERROR', message, { status: error.status, headers: { connection: 'close' } });
  }
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SandboxError('VALIDATION_ERROR', 'The body is not valid JSON.', { details: [{ path: '', message: 'is not valid JSON' }] });
  }
}

function notFound(routes: readonly Route[], method: string, path: string): SandboxError {
  const hint = method === 'POST' && path === `${PREFIX}/orders`
    ? ' POST /orders was removed in v1.1: orders reach the ERP through the order.created webhook.'
    : '';
  return new SandboxError('NOT_FOUND', `No route ${method} ${routeShape(routes, path)}.${hint}`);
}

/**
 * The path as echoed: a segment that is no literal part of any route (an id, a coupon code, a phone
 * number, a customer's e-mail) is shown as `{…}`, so that nothing the caller put there comes back.
 */
function routeShape(routes: readonly Route[], path: string): string {
  const words = new Set(['integration', 'v1', '_sandbox', ...routes.flatMap((route) => route.path.split('/').filter((part) => part !== '' && !part.startsWith(':')))]);
  return path.split('/').map((part) => (part === '' || words.has(part) ? part : '{…}')).join('/');
}

// The failure's own message may hold request data (a customer, a coupon): it is not echoed.
function internal(_error: unknown): CoreResponse {
  return errorResponse(new SandboxError('INTERNAL', 'Unexpected sandbox failure.'));
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
