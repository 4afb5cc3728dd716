import type { TenantsContext } from './context.ts';
import type { SealedValueRef } from './store.ts';
import type { RekeyResult } from './types.ts';

const PAGE = 200;

/**
 * `tenants.rekey()`: every sealed value not under `encryptionKey.current` is opened (with a previous
 * key) and sealed again under it, one compare-and-set at a time (a value another process changed
 * meanwhile is left to it). Then the store's key check moves too: processes with only an old key
 * are refused from then on. Safe to run again, and while clients send.
 */
export async function rekeyTenants(context: TenantsContext): Promise<RekeyResult> {
  const { store, credentials } = context;
  await credentials.ready();
  let resealed = 0;
  let unchanged = 0;
  let after: SealedValueRef | null = null;
  for (;;) {
    const page = await store.sealedValues(after, PAGE);
    for (const value of page) {
      if (credentials.isCurrent(value.sealed)) {
        unchanged++;
        continue;
      }
      if (await store.reseal(value, credentials.reseal(value.tenantId, value.endpointId, value.sealed))) resealed++;
    }
    if (page.length < PAGE) break;
    after = page.at(-1)!;
  }
  await credentials.resealKeyCheck();
  return { resealed, unchanged };
}
