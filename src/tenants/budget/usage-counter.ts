/** Minutes of egress use kept for `usage()` (`doctor --tenants` shows the last minutes). */
export const USAGE_MINUTES = 15;
const MINUTE = 60_000;

export interface MinuteUsage {
  /** ISO 8601, the start of the minute. */
  minuteStartedAt: string;
  requests: number;
}

/** Requests per clock minute, the last `USAGE_MINUTES` kept. */
export class UsageCounter {
  readonly #minutes = new Map<number, number>();

  count(now: number): void {
    const minute = now - (now % MINUTE);
    const count = this.#minutes.get(minute);
    if (count !== undefined) {
      this.#minutes.set(minute, count + 1);
      return;
    }
    this.#minutes.set(minute, 1);
    for (const old of this.#minutes.keys()) if (old <= minute - USAGE_MINUTES * MINUTE) this.#minutes.delete(old);
  }

  report(now: number): MinuteUsage[] {
    return usageReport(now, this.#minutes);
  }
}

/** The last `USAGE_MINUTES` minutes up to the one under way, oldest first, a minute with no request as 0. */
export function usageReport(now: number, minutes: ReadonlyMap<number, number>): MinuteUsage[] {
  const current = now - (now % MINUTE);
  return Array.from({ length: USAGE_MINUTES }, (_, index) => {
    const minute = current - (USAGE_MINUTES - 1 - index) * MINUTE;
    return { minuteStartedAt: new Date(minute).toISOString(), requests: minutes.get(minute) ?? 0 };
  });
}

/** How long the Redis script keeps a minute's count. */
export const USAGE_KEEP_MS = USAGE_MINUTES * MINUTE;
