/**
 * Whose delivery a request is and which secrets may have signed it: what the receiver's secret
 * lookups (./delivery-secrets.ts, and ./tenant-secrets.ts's cache for many merchants) hand to the
 * authentication (./authenticate.ts).
 */

/** One secret a delivery may be signed with. Holds a secret: never logged. */
export interface KnownSecret {
  /** Opaque and not secret: what an entry keeps of the secret that verified it (`verifiedBy`). */
  id: string;
  secret: string;
  /** When the registry stored it (a tenant's); `null` for a single merchant's. */
  createdAt: number | null;
  /** When a receiver first verified a delivery with it; `null` until then (or not recorded). */
  verifiedAt: number | null;
}

/** Whose delivery a request is, and what may have signed it. */
export interface Addressee {
  /** The tenant the URL names; `undefined` in a single-merchant inbox. */
  tenant: string | undefined;
  secrets: readonly KnownSecret[];
  /** A rotation is in progress (or the tenant is connecting): hold a delivery no secret verifies. */
  rotating: boolean;
}
