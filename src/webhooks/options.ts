/** Options of {@link verifyWebhook} and {@link verifyWebhookAsync}. */
export interface VerifyWebhookOptions {
  /**
   * How far `X-Service-Timestamp` may be from now, in seconds, in either direction.
   * @default 300
   */
  toleranceSeconds?: number;
  /**
   * The clock to compare the timestamp with: a `Date`, or milliseconds since the epoch as
   * `Date.now()` gives. For tests and replays.
   * @default the current time
   */
  now?: Date | number;
}
