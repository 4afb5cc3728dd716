// A fake Requester that answers POST /products/bulk and PATCH /stock the way the service does
// (spec 4.2, 4.3 and the wire assumptions), records every request, and lets a test choose when
// each answer arrives and which batch fails.
import type { ProductItem } from '../../../src/schemas/products.ts';
import type { Requester, RequestSpec } from '../../../src/transport/types.ts';

export const STORE_A = '5f0c6a1e-8d3b-4c2a-9e7f-1a2b3c4d5e6f';
export const STORE_B = '22222222-2222-4222-8222-222222222222';
/** Outside the key's stores: items touching it fail with FORBIDDEN_STORE. */
export const FORBIDDEN = '99999999-9999-4999-8999-999999999999';

type Item = Record<string, unknown>;
type ItemError = { code: string; message: string };

export interface SentRequest {
  method: string;
  path: string;
  items: Item[];
  retry: string;
  options: unknown;
}

export interface FakeServiceOptions {
  /** External ids already in the catalog (updated, not created; stock finds them). */
  catalog?: Iterable<string>;
  /** The error the n-th request (0-based) rejects with. */
  failRequest?: (n: number, items: Item[]) => unknown;
  /** Milliseconds before the n-th request is answered (uses setTimeout: pair with fake timers). */
  delayMs?: (n: number) => number;
  /** Hold every answer until the test calls `release(n)`. */
  manual?: boolean;
  /** Rewrite an answer before it is returned (to make it inconsistent). */
  tamper?: (n: number, answer: { sync_id: string; results: Item[] }) => void;
}

function forbidden(item: Item): boolean {
  if (item.store_id === FORBIDDEN) return true;
  return Array.isArray(item.stores) && item.stores.some((block: Item) => block.store_id === FORBIDDEN);
}

function countStatuses(results: { status: string }[], statuses: string[]): Record<string, number> {
  const summary: Record<string, number> = { errors: results.filter((r) => r.status === 'error').length };
  for (const status of statuses) summary[status] = results.filter((r) => r.status === status).length;
  return summary;
}

export function createFakeService(options: FakeServiceOptions = {}) {
  const catalog = new Set(options.catalog ?? []);
  const requests: SentRequest[] = [];
  const releases: (() => void)[] = [];
  /** Request numbers in the order their answers (or failures) came back. */
  const answered: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  function answerProducts(n: number, items: Item[]) {
    const seen = new Set<string>();
    const results = items.map((item, index) => {
      const id = String(item.external_id);
      let error: ItemError | undefined;
      if (seen.has(id)) error = { code: 'VALIDATION_ERROR', message: 'external_id is duplicated in batch' };
      else if (forbidden(item)) error = { code: 'FORBIDDEN_STORE', message: 'store outside the key scope' };
      seen.add(id);
      if (error) return { index, external_id: id, status: 'error', error };
      const status = catalog.has(id) ? 'updated' : 'created';
      catalog.add(id);
      return { index, external_id: id, status };
    });
    return { sync_id: `sync-${n}`, summary: countStatuses(results, ['created', 'updated']), results };
  }

  function answerStock(n: number, items: Item[]) {
    const results = items.map((item, index) => {
      const base = { index, external_id: String(item.external_id), store_id: String(item.store_id) };
      if (!catalog.has(base.external_id)) return { ...base, status: 'error', error: { code: 'PRODUCT_NOT_FOUND', message: 'not in the catalog' } };
      if (forbidden(item)) return { ...base, status: 'error', error: { code: 'FORBIDDEN_STORE', message: 'store outside the key scope' } };
      return { ...base, status: 'updated' };
    });
    return { sync_id: `sync-${n}`, summary: countStatuses(results, ['updated']), results };
  }

  const requester: Requester = {
    async send<T>(spec: RequestSpec<T>): Promise<T> {
      const n = requests.length;
      const items = (spec.body as { items: Item[] }).items;
      // A copy of what would go on the wire: JSON, as the transport would send it.
      const wire = JSON.parse(JSON.stringify(items)) as Item[];
      requests.push({ method: spec.method, path: spec.path, items: wire, retry: spec.retry, options: spec.options });
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (options.manual) await new Promise<void>((resolve) => (releases[n] = resolve));
        const delay = options.delayMs?.(n) ?? 0;
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        answered.push(n);
        const failure = options.failRequest?.(n, wire);
        if (failure !== undefined) throw failure;
        const answer = spec.path === '/stock' ? answerStock(n, wire) : answerProducts(n, wire);
        options.tamper?.(n, answer);
        return (spec.schema ? spec.schema.parse(answer) : answer) as T;
      } finally {
        inFlight -= 1;
      }
    },
  };

  return {
    requester,
    requests,
    answered,
    catalog,
    get maxInFlight() {
      return maxInFlight;
    },
    /** Lets the n-th held request answer. */
    release(n: number) {
      const release = releases[n];
      if (!release) throw new Error(`request ${n} has not been sent`);
      release();
    },
  };
}

/** Lets every callback already queued run (real timers only). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

export function product(id: string | number, extra: Item = {}): ProductItem {
  return { external_id: `SKU-${id}`, name: `Product ${id}`, price: 10, ...extra };
}

/** An item the types would refuse, as plain JavaScript callers can send. */
export function untyped(value: unknown): ProductItem {
  return value as ProductItem;
}

export function products(count: number, from = 0): ProductItem[] {
  return Array.from({ length: count }, (_, i) => product(from + i));
}
