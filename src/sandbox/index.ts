/**
 * `integration-sdk/sandbox`: a local emulator of Integration API v1. The real service has no
 * sandbox (spec part 1); this one plays both the service and the platform that creates orders.
 * It shares only the wire schemas and the error vocabulary with the client; from the receiving
 * side it reuses the bounded body reader (`src/bounded-body.ts`, a leaf like the clock), and its time comes
 * through the one clock seam (`src/clock.ts`).
 */
export { createSandbox } from './create-sandbox.ts';
export type * from './types.ts';
export { FAULT_KINDS } from './faults.ts';
export { RETRY_DELAYS_SECONDS, MAX_ATTEMPTS } from './webhooks/retry-schedule.ts';
