import type { LoyaltyCustomer } from '../../schemas/loyalty.ts';
import { SandboxError } from '../http/sandbox-error.ts';
import type { CustomerRecord, SandboxState } from '../state.ts';
import type { Checker } from '../validate.ts';
import { phoneKey } from './phone.ts';

export type CustomerLookup = { phone: string } | { external_id: string };

/**
 * Wire assumption: a customer is named by exactly one of `phone` or `external_id`. Returns
 * undefined (with an issue added) when the reference is unusable; `optional` allows neither.
 */
export function readCustomerRef(source: { phone?: unknown; external_id?: unknown }, check: Checker, optional = false): CustomerLookup | undefined {
  const hasPhone = source.phone !== undefined && source.phone !== null;
  const hasExternal = source.external_id !== undefined && source.external_id !== null;
  if (hasPhone && hasExternal) return void check.add('', 'give exactly one of phone or external_id, not both');
  if (!hasPhone && !hasExternal) {
    if (!optional) check.add('', 'give exactly one of phone or external_id');
    return undefined;
  }
  if (hasExternal) {
    const external_id = check.string(source.external_id, 'external_id', { max: 255 });
    return external_id === undefined ? undefined : { external_id };
  }
  const phone = check.string(source.phone, 'phone', { max: 40 });
  if (phone === undefined) return undefined;
  if (phoneKey(phone) === null) return void check.add('phone', 'is not a Brazilian phone number (area code and 8 or 9 digits, with or without +55)');
  return { phone };
}

/** Find-only (spec 4.6): a customer is never created here. */
export function findCustomer(state: SandboxState, ref: CustomerLookup): CustomerRecord {
  const wanted = 'phone' in ref ? phoneKey(ref.phone) : null;
  const customer = state.customers.find((c) => ('phone' in ref ? phoneKey(c.phone) === wanted : c.external_id === ref.external_id));
  if (!customer) throw new SandboxError('CUSTOMER_NOT_FOUND', 'No loyalty customer with this phone or external_id; loyalty never creates customers.');
  return customer;
}

export function requireProgram(state: SandboxState): void {
  if (!state.program.active) throw new SandboxError('NO_PROGRAM', 'The merchant has no active loyalty program.');
}

export function customerView(customer: CustomerRecord): LoyaltyCustomer {
  return { id: customer.id, name: customer.name, phone: customer.phone, external_id: customer.external_id };
}
