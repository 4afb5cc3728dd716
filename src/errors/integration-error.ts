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
    Object.defineProperty(this, BRANDS, { value: brandsOf(new.target), enumerable: false });
  }

  /** The class's public name, kept apart from `constructor.name` so that minified builds agree. */
  static readonly errorName: string = 'IntegrationError';

  /**
   * `instanceof` across copies of the SDK: the ESM and the CommonJS builds each define their own
   * classes (an app may load both, or two versions), so an error thrown by one must still match
   * the same-named class of the other. Each error carries, under a registered symbol, the names of
   * its class chain; a class matches an object whose chain names it.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    if (typeof value !== 'object' || value === null) return false;
    const brands = (value as { [BRANDS]?: unknown })[BRANDS];
    return Array.isArray(brands) && brands.includes((this as typeof IntegrationError).errorName);
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
/** Registered (`Symbol.for`), so every copy of the SDK in one process reads the same key. */
const BRANDS = Symbol.for('integration-sdk.error-classes');

/** The `errorName`s of a class and its ancestors up to `IntegrationError`. */
function brandsOf(errorClass: { errorName?: string }): readonly string[] {
  const names: string[] = [];
  for (let current: unknown = errorClass; typeof current === 'function' && current !== Error; current = Object.getPrototypeOf(current)) {
    const name = (current as { errorName?: unknown }).errorName;
    if (typeof name === 'string' && Object.hasOwn(current, 'errorName')) names.push(name);
  }
  return Object.freeze(names);
}

export class ConfigurationError extends IntegrationError {
  static override readonly errorName: string = 'ConfigurationError';
}
