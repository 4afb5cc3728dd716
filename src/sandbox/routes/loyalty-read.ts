import type { LoyaltyBalance, LoyaltyStatement } from '../../schemas/loyalty.ts';
import type { Route, RouteContext } from '../http/route.ts';
import { validationError } from '../http/sandbox-error.ts';
import { customerView, findCustomer, readCustomerRef, requireProgram } from '../loyalty/customers.ts';
import { Checker, limitParam } from '../validate.ts';

/** Spec 4.6 reads, scope loyalty:read; the customer comes from the query. */
export const loyaltyReadRoutes: Route[] = [
  { method: 'GET', path: '/loyalty/program', scope: 'loyalty:read', handler: program },
  { method: 'GET', path: '/loyalty/balance', scope: 'loyalty:read', handler: balance },
  { method: 'GET', path: '/loyalty/statement', scope: 'loyalty:read', handler: statement },
];

function program({ state }: RouteContext) {
  requireProgram(state);
  return { status: 200, body: { ...state.program } };
}

function customerFromQuery({ state, query }: RouteContext, limit?: { fallback: number; max: number }) {
  const check = new Checker();
  const ref = readCustomerRef({ phone: query.get('phone') ?? undefined, external_id: query.get('external_id') ?? undefined }, check);
  const n = limit ? limitParam(query, limit.fallback, limit.max, check) : 0;
  if (!check.ok || !ref) throw validationError(check.issues);
  requireProgram(state);
  return { customer: findCustomer(state, ref), limit: n };
}

function balance(ctx: RouteContext) {
  const { customer } = customerFromQuery(ctx);
  const body: LoyaltyBalance = { customer: customerView(customer), points: customer.points, program_id: ctx.state.program.id };
  return { status: 200, body };
}

function statement(ctx: RouteContext) {
  const { customer, limit } = customerFromQuery(ctx, { fallback: 50, max: 100 });
  const entries = [...customer.entries].reverse().slice(0, limit).map((e) => ({ ...e }));
  const body: LoyaltyStatement = { customer: customerView(customer), points: customer.points, entries };
  return { status: 200, body };
}
