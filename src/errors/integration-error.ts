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
  }

  /** The class's public name, kept apart from `constructor.name` so that minified builds agree. */
  static readonly errorName: string = 'IntegrationError';

  /** Plain, secret-free view for `JSON.stringify` (an `Error` serialises to `{}` otherwise). */
  toJSON(): Record<string, unknown> {
    const own: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      if (key !== 'cause' && value !== undefined) own[key] = value;
    }
    return own;
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
