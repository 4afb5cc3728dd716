// One line of `integration-sdk doctor`: a check, how it went, and what to do about a failure.

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface Check {
  check: string;
  status: CheckStatus;
  detail: string;
}
