import { randomUUID } from 'node:crypto';
import type { LoyaltyEntry, PointsResult } from '../../schemas/loyalty.ts';
import { isoAt } from '../clock.ts';
import type { Route, RouteContext } from '../http/route.ts';
import { SandboxError, validationError } from '../http/sandbox-error.ts';
import { findCustomer, readCustomerRef, requireProgram } from '../loyalty/customers.ts';
import { Checker, isRecord, typeOf } from '../validate.ts';

/**
 * Spec 4.6 writes, scope loyalty:write. Idempotent by `idempotency_key` (per operation, per
 * merchant): a repeat answers 200 with the original entry, whatever its body says.
 */
export const loyaltyPointsRoutes: Route[] = [
  { method: 'POST', path: '/loyalty/points', scope: 'loyalty:write', handler: (ctx) => write(ctx, 'credit') },
  { method: 'POST', path: '/loyalty/points/debit', scope: 'loyalty:write', handler: (ctx) => write(ctx, 'debit') },
];

function write({ state, body, services }: RouteContext, type: 'credit' | 'debit') {
  const input = readPointsBody(body);
  requireProgram(state);
  const replay = state.loyaltyWrites.get(`${type}:${input.idempotency_key}`);
  if (replay) {
    const owner = state.customers.find((c) => c.id === replay.customerId);
    const result: PointsResult = { entry: { ...replay.entry }, balance: owner?.points ?? 0 };
    return { status: 200, body: result };
  }
  const customer = findCustomer(state, input.ref);
  if (type === 'debit' && input.points > customer.points) {
    throw new SandboxError('INSUFFICIENT_BALANCE', "The debit is larger than the customer's balance.");
  }
  const entry: LoyaltyEntry = {
    id: randomUUID(), type, points: input.points, description: input.description ?? null, created_at: isoAt(services.clock), idempotency_key: input.idempotency_key,
  };
  customer.points += type === 'credit' ? input.points : -input.points;
  customer.entries.push(entry);
  state.loyaltyWrites.set(`${type}:${input.idempotency_key}`, { entry, customerId: customer.id });
  const result: PointsResult = { entry: { ...entry }, balance: customer.points };
  return { status: 201, body: result };
}

function readPointsBody(body: unknown) {
  if (!isRecord(body)) throw validationError([{ path: '', message: `the body must be a JSON object, got ${typeOf(body)}` }]);
  const check = new Checker();
  const ref = readCustomerRef(body, check);
  const points = check.number(body.points, 'points', { required: true, integer: true, min: 1 });
  const idempotency_key = check.string(body.idempotency_key, 'idempotency_key', { required: true, max: 255 });
  const description = check.string(body.description, 'description', { max: 500 });
  check.string(body.order_id, 'order_id');
  check.string(body.store_id, 'store_id');
  if (!check.ok || !ref || points === undefined || idempotency_key === undefined) throw validationError(check.issues);
  return { ref, points, idempotency_key, description };
}
