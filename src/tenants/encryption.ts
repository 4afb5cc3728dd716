/**
 * Credentials at rest: AES-256-GCM from `node:crypto`, a fresh random 12-byte nonce per value, and
 * associated data binding each value to its tenant and its place (a row copied onto another tenant,
 * or a secret copied into the key's column, does not decrypt). A sealed value names the key it was
 * sealed with by a key id (an HMAC of a fixed text under the key, never the key), so that a value
 * sealed with a key this process does not have is reported as such, and `rekey()` finds what to move.
 *
 * Sealed form: `v1.<key id, 16 hex>.<base64url(nonce ‖ ciphertext ‖ tag)>`.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { ConfigurationError } from '../errors/integration-error.ts';

/** `encryptionKey` of `createTenants`: 32 random bytes in base64, or several while re-keying. */
export type EncryptionKeyOption = string | { current: string; previous?: readonly string[] };

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

interface DataKey {
  id: string;
  bytes: Buffer;
}

/** Why a sealed value could not be opened. */
export type OpenFailure = 'unknown_key' | 'tampered' | 'malformed';

/** Thrown by {@link Keyring.open}; turned into a `ConfigurationError` naming the tenant by the caller. */
export class CannotOpen extends Error {
  readonly failure: OpenFailure;
  readonly keyId: string | null;

  constructor(failure: OpenFailure, keyId: string | null) {
    super(failure);
    this.failure = failure;
    this.keyId = keyId;
  }
}

/**
 * The encryption keys of one `createTenants`: `current` seals, every key opens. Holds the keys in
 * private fields and shows nothing of them to `util.inspect` or `JSON.stringify`.
 */
export class Keyring {
  readonly #current: DataKey;
  readonly #all: Map<string, DataKey>;

  constructor(option: EncryptionKeyOption) {
    const { current, previous } = keysOf(option);
    this.#current = dataKey(current, typeof option === 'string' ? 'encryptionKey' : 'encryptionKey.current');
    this.#all = new Map([[this.#current.id, this.#current]]);
    previous.forEach((key, index) => {
      const parsed = dataKey(key, `encryptionKey.previous[${index}]`);
      if (!this.#all.has(parsed.id)) this.#all.set(parsed.id, parsed);
    });
  }

  /** The id of the key that seals. */
  get currentKeyId(): string {
    return this.#current.id;
  }

  /** Seals `plaintext` for `context` (the tenant id and the value's place). */
  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#current.bytes, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}.${this.#current.id}.${Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url')}`;
  }

  /** Opens a sealed value for `context`; throws {@link CannotOpen}. */
  open(sealed: string, context: string): string {
    const [version, keyId, payload, extra] = sealed.split('.');
    if (version !== VERSION || keyId === undefined || payload === undefined || extra !== undefined) throw new CannotOpen('malformed', null);
    const key = this.#all.get(keyId);
    if (key === undefined) throw new CannotOpen('unknown_key', keyId);
    const bytes = Buffer.from(payload, 'base64url');
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new CannotOpen('malformed', keyId);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, bytes.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new CannotOpen('tampered', keyId);
    }
  }

  /** The key id a sealed value names (`null` when it is not a sealed value). */
  static keyIdOf(sealed: string): string | null {
    const [version, keyId] = sealed.split('.');
    return version === VERSION && keyId !== undefined && /^[0-9a-f]{16}$/.test(keyId) ? keyId : null;
  }

  [inspect.custom](): string {
    return `Keyring { current: ${this.#current.id}, keys: ${this.#all.size} }`;
  }

  toJSON(): Record<string, unknown> {
    return { currentKeyId: this.#current.id, keys: this.#all.size };
  }
}

function keysOf(option: EncryptionKeyOption): { current: unknown; previous: unknown[] } {
  if (typeof option === 'string') return { current: option, previous: [] };
  if (typeof option !== 'object' || option === null) {
    throw new ConfigurationError('encryptionKey is missing: pass 32 random bytes in base64 (openssl rand -base64 32), or { current, previous: [...] } while re-keying');
  }
  const previous = (option as { previous?: unknown }).previous ?? [];
  if (!Array.isArray(previous)) throw new ConfigurationError('encryptionKey.previous must be an array of base64 keys');
  return { current: (option as { current?: unknown }).current, previous };
}

/** A base64 (or base64url) string of exactly 32 bytes; the message names the rule, never the value. */
function dataKey(value: unknown, name: string): DataKey {
  if (value === undefined || value === null || value === '') {
    throw new ConfigurationError(`${name} is missing: pass 32 random bytes in base64 (openssl rand -base64 32)`);
  }
  if (typeof value !== 'string') throw new ConfigurationError(`${name} must be a base64 string, got ${typeof value}`);
  const text = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new ConfigurationError(`${name} is not base64 (only A-Z, a-z, 0-9, +, /, - and _ with = padding)`);
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== 32) {
    throw new ConfigurationError(`${name} must be 32 bytes (AES-256), got ${bytes.length}: make one with openssl rand -base64 32`);
  }
  return { id: createHmac('sha256', bytes).update('integration-sdk/tenants key id').digest('hex').slice(0, 16), bytes };
}

/** The associated data of a tenant's API key. */
export function apiKeyContext(tenantId: string): string {
  return `integration-sdk/tenants\napi_key\n${tenantId}`;
}

/** The associated data of the secret of one of a tenant's endpoints. */
export function secretContext(tenantId: string, endpointId: string): string {
  return `integration-sdk/tenants\nwebhook_secret\n${tenantId}\n${endpointId}`;
}

/** The associated data of the store's key check (a known text sealed under the current key). */
export const KEY_CHECK_CONTEXT = 'integration-sdk/tenants\nkey_check';
export const KEY_CHECK_TEXT = 'integration-sdk/tenants key check';
