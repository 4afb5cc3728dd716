import type { Clock } from '../clock.ts';
import type { WebhookEndpoint } from '../schemas/index.ts';

/**
 * How long a client keeps looking for an endpoint its failed create may still register. A service
 * still working on a request minutes after the client gave up is already far-fetched; the longer
 * the watch, the longer another process registering the same URL and events could be mistaken
 * for the late one.
 */
export const LATE_REGISTRATION_WATCH_MS = 10 * 60_000;

/** What a create registers: its URL and its set of events. */
export interface EndpointShape {
  url: string;
  events: readonly string[];
}

/** A failed create whose endpoint may still appear, and the endpoints it cannot be. */
interface Expected {
  shape: string;
  until: number;
  /** There before the failed create started, or received (with their secret) by this client since. */
  notIt: Set<string>;
}

/** An endpoint taken for a late registration; `release()` hands its entry back (its deletion failed). */
export interface Claim {
  endpoint: WebhookEndpoint;
  release(): void;
}

/**
 * One client's memory of its failed `webhooks.create` calls whose endpoint was not found but may
 * still be registered (the service outlived the client's patience). A later `create` or `list` of
 * the client deletes such an endpoint when it shows up: same URL and events, created after the
 * failed call started (not among the endpoints listed then), and not one whose secret this client
 * received. Ids, not `created_at`: the service's clock and the client's may differ.
 */
export class LateRegistrations {
  readonly #clock: Clock;
  #expected: Expected[] = [];
  /** Creates under way, by shape: the endpoint of each may be one whose secret is on its way here. */
  readonly #sending = new Map<string, number>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** A create of `shape` is being sent; call the returned function once it has settled. */
  sending(shape: EndpointShape): () => void {
    const key = shapeKey(shape);
    this.#sending.set(key, (this.#sending.get(key) ?? 0) + 1);
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      const left = this.#sending.get(key)! - 1;
      if (left === 0) this.#sending.delete(key);
      else this.#sending.set(key, left);
    };
  }

  /** A failed create of `shape`, when `before` was listed, may still register its endpoint. */
  expect(shape: EndpointShape, before: ReadonlySet<string>): void {
    this.#expected.push({ shape: shapeKey(shape), until: this.#clock.now() + LATE_REGISTRATION_WATCH_MS, notIt: new Set(before) });
  }

  /** This client received the secret of endpoint `id`: it is never taken for a late one. */
  received(id: string): void {
    for (const expected of this.#expected) expected.notIt.add(id);
  }

  /** The endpoints of `listed` that this client's failed creates registered late: at most one per failed create. */
  claim(listed: readonly WebhookEndpoint[]): Claim[] {
    const now = this.#clock.now();
    this.#expected = this.#expected.filter((expected) => expected.until > now);
    const claims: Claim[] = [];
    const taken = new Set<string>();
    for (const expected of [...this.#expected]) {
      if (this.#sending.has(expected.shape)) continue;
      const endpoint = listed.find((candidate) => !taken.has(candidate.id) && !expected.notIt.has(candidate.id) && shapeKey(candidate) === expected.shape);
      if (endpoint === undefined) continue;
      taken.add(endpoint.id);
      this.#expected.splice(this.#expected.indexOf(expected), 1);
      claims.push({ endpoint, release: () => void this.#expected.push(expected) });
    }
    return claims;
  }
}

/** The same URL and the same set of events: what a create of `shape` registers. */
export function shapeKey(shape: EndpointShape): string {
  return `${shape.url}\n${[...new Set(shape.events)].sort().join(',')}`;
}
