/**
 * Base class of every error this SDK throws.
 *
 * An `IntegrationError` never holds the API key, a webhook secret, or a request or response body
 * that may carry personal data: it is safe to log, `JSON.stringify` or `util.inspect`.
 *
 * @example
 * ```ts
 * try {
 *   await client.health();
 * } catch (error) {
 *   if (error instanceof IntegrationError) console.error(error.name, error.message);
 * }
 * ```
 */
export class IntegrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    // Set by hand so that minifiers renaming classes cannot change what users match on.
    Object.defineProperty(this, 'name', { value: new.target.errorName, enumerable: false, configurable: true, writable: true });
    brand(this, new.target);
  }

  /**
   * On errors of `loyalty.credit`, `debit` and `redeemCoupon`: the `idempotency_key` the write was
   * sent with. The write may have been processed: repeat it with this key to apply it at most once.
   */
  declare readonly idempotency_key?: string;

  /** The class's public name, kept apart from `constructor.name` so that minified builds agree. */
  static readonly errorName: string = 'IntegrationError';

  /**
   * `instanceof` across copies of the SDK (the ESM and the CommonJS build in one app): every error
   * carries a registered-symbol brand per class of ours it belongs to, recognised by the other copy.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    if (typeof value !== 'object' || value === null || !Object.hasOwn(this, 'errorName')) return false;
    return (value as Record<symbol, unknown>)[brandOf((this as typeof IntegrationError).errorName)] === true;
  }

  /** Plain, secret-free view for `JSON.stringify` (an `Error` serialises to `{}` otherwise). */
  toJSON(): Record<string, unknown> {
    const own: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      if (key !== 'cause' && value !== undefined) own[key] = value;
    }
    return own;
  }
}

/** The registered symbol naming one of our classes: the same in every copy of the SDK. */
function brandOf(errorName: string): symbol {
  return Symbol.for(`integration-sdk.${errorName}`);
}

/** Marks `error` with the brand of every class of ours from `target` up to `IntegrationError`. */
function brand(error: IntegrationError, target: Function): void {
  for (let current: Function | null = target; current !== null && current !== Error; current = Object.getPrototypeOf(current) as Function | null) {
    if (Object.hasOwn(current, 'errorName')) {
      Object.defineProperty(error, brandOf((current as typeof IntegrationError).errorName), { value: true, enumerable: false });
    }
  }
}

/**
 * Bad client options: thrown at once by the constructor, before any request is sent. The message
 * names the rule that failed and never echoes the key.
 *
 * @example
 * ```ts
 * new IntegrationClient({ apiKey: 'service_abc_xyz\n', baseUrl: 'https://x.example' });
 * // ConfigurationError: apiKey contains whitespace (a space or line break copied with it?)
 * ```
 */
export class ConfigurationError extends IntegrationError {
  static override readonly errorName: string = 'ConfigurationError';
}
