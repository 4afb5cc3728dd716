/**
 * The one place the tenants module reaches its egress budget (`./budget/`: fair across tenants,
 * interactive calls first, shared through Redis when given one).
 */
export { createTenantBudget, type TenantBudget, type TenantBudgetOptions } from './budget/index.ts';
