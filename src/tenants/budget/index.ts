// The tenants' shared egress budget: each tenant's RateLimiter, fair across tenants, interactive first.
export { createTenantBudget, type TenantBudget, type TenantBudgetOptions, type TenantBudgetSeams } from './tenant-budget.ts';
export type { MinuteUsage } from './usage-counter.ts';
export type { RequestKind } from './request-kind.ts';
