import { IntegrationError } from './integration-error.ts';

/** One rejected argument: where (`path`, e.g. `points`) and what is wrong (`message`). */
export interface InputIssue {
  path: string;
  message: string;
}

/**
 * An argument proven wrong before sending (e.g. `points: 1.5`): nothing was sent, and retrying
 * unchanged fails again. The service's own 400 is `ValidationError`; both carry `issues`. Never
 * echoes the value.
 *
 * @example
 * ```ts
 * try {
 *   await client.loyalty.credit({ phone, points: 0 });
 * } catch (error) {
 *   if (error instanceof InvalidInputError) console.log(error.issues); // [{ path: 'points', message: '...' }]
 * }
 * ```
 */
export class InvalidInputError extends IntegrationError {
  static override readonly errorName: string = 'InvalidInputError';
  /** Every rejected argument: `{ path, message }`, never the value. */
  readonly issues: InputIssue[];

  constructor(issues: InputIssue[]) {
    super(`invalid input, nothing was sent: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`);
    this.issues = issues;
  }
}
