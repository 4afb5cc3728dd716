import type { AcquireBudget } from '../../../src/transport/rate-limiter.ts';

/** What a call has left of its deadline, as the transport hands it to `acquire`; records what the limiter charged. */
export function recordingBudget(remainingMs: number): AcquireBudget & { spent: number } {
  return {
    spent: 0,
    remaining() {
      return remainingMs - this.spent;
    },
    spend(ms) {
      this.spent += ms;
    },
  };
}
