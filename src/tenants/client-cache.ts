/**
 * Tenants' clients: the same client for a tenant while anything still holds it (a weak reference
 * finds it), plus the most recently used idle ones (a strong LRU), so that 10,000 connected tenants
 * do not keep 10,000 clients in memory. When a dropped client is collected, `onCollected` lets the
 * budget forget the tenant.
 */
import type { IntegrationClient } from '../client.ts';

export class ClientCache {
  readonly #maxIdle: number;
  readonly #recent = new Map<string, IntegrationClient>();
  readonly #alive = new Map<string, WeakRef<IntegrationClient>>();
  readonly #registry: FinalizationRegistry<{ id: string; ref: WeakRef<IntegrationClient> }>;

  constructor(maxIdle: number, onCollected: (id: string) => void) {
    this.#maxIdle = maxIdle;
    this.#registry = new FinalizationRegistry(({ id, ref }) => {
      // Only if no newer client of the tenant took its place.
      if (this.#alive.get(id) !== ref) return;
      this.#alive.delete(id);
      onCollected(id);
    });
  }

  get(id: string, make: () => IntegrationClient): IntegrationClient {
    let client = this.#recent.get(id) ?? this.#alive.get(id)?.deref();
    if (client === undefined) {
      client = make();
      const ref = new WeakRef(client);
      this.#alive.set(id, ref);
      this.#registry.register(client, { id, ref }, ref);
    }
    // Most recent last: re-inserting moves it.
    this.#recent.delete(id);
    this.#recent.set(id, client);
    for (const oldest of this.#recent.keys()) {
      if (this.#recent.size <= this.#maxIdle) break;
      this.#recent.delete(oldest);
    }
    return client;
  }

  /** Forgets a tenant's client (disconnected): the next `get` makes a new one. */
  drop(id: string): void {
    this.#recent.delete(id);
    const ref = this.#alive.get(id);
    if (ref) this.#registry.unregister(ref);
    this.#alive.delete(id);
  }

  /** Clients held strongly (the idle ones kept for reuse). */
  get held(): number {
    return this.#recent.size;
  }

  clear(): void {
    for (const id of [...this.#alive.keys()]) this.drop(id);
  }
}
