/**
 * The tenants' credentials between the store (sealed) and the clients (open): sealing and opening
 * with the tenant's associated data, the store's key check, and the errors that say clearly that a
 * value was sealed with another encryption key (never which bytes, never the value).
 */
import { inspect } from 'node:util';
import { ConfigurationError } from '../errors/integration-error.ts';
import { apiKeyContext, CannotOpen, KEY_CHECK_CONTEXT, KEY_CHECK_TEXT, Keyring, secretContext, type EncryptionKeyOption } from './encryption.ts';
import type { TenantRecord, TenantStore } from './store.ts';

const KEY_CHECK = 'key_check';

export class Credentials {
  readonly #keyring: Keyring;
  readonly #store: TenantStore;
  #checked: Promise<void> | undefined;

  constructor(encryptionKey: EncryptionKeyOption, store: TenantStore) {
    this.#keyring = new Keyring(encryptionKey);
    this.#store = store;
  }

  get currentKeyId(): string {
    return this.#keyring.currentKeyId;
  }

  /**
   * Once per process: the store's key check (a known text sealed when the store was first used)
   * must open with one of our keys; a store written with another key reads nothing and says so.
   */
  ready(): Promise<void> {
    this.#checked ??= (async () => {
      const check = await this.#store.readMeta(KEY_CHECK);
      if (check === null) {
        await this.#store.writeMeta(KEY_CHECK, this.#keyring.seal(KEY_CHECK_TEXT, KEY_CHECK_CONTEXT));
        return;
      }
      try {
        this.#keyring.open(check, KEY_CHECK_CONTEXT);
      } catch (error) {
        if (!(error instanceof CannotOpen)) throw error;
        throw new ConfigurationError(
          `encryptionKey does not open this tenants store: it was written with another encryption key (key id ${Keyring.keyIdOf(check) ?? 'unknown'}; this process has ${this.#keyring.currentKeyId}). ` +
            'Pass the key it was written with as encryptionKey, or in encryptionKey.previous while re-keying; nothing was read.',
        );
      }
    })().catch((error: unknown) => {
      this.#checked = undefined;
      throw error;
    });
    return this.#checked;
  }

  /** After `rekey`: the key check moves to the current key too. */
  async resealKeyCheck(): Promise<void> {
    await this.#store.writeMeta(KEY_CHECK, this.#keyring.seal(KEY_CHECK_TEXT, KEY_CHECK_CONTEXT));
  }

  sealApiKey(tenantId: string, apiKey: string): string {
    return this.#keyring.seal(apiKey, apiKeyContext(tenantId));
  }

  openApiKey(record: Pick<TenantRecord, 'id' | 'apiKey'>): string | null {
    if (record.apiKey === null) return null;
    return this.#open(record.apiKey, apiKeyContext(record.id), `tenant ${JSON.stringify(record.id)}'s API key`);
  }

  sealSecret(tenantId: string, endpointId: string, secret: string): string {
    return this.#keyring.seal(secret, secretContext(tenantId, endpointId));
  }

  openSecret(tenantId: string, endpointId: string, sealed: string): string {
    return this.#open(sealed, secretContext(tenantId, endpointId), `tenant ${JSON.stringify(tenantId)}'s webhook secret of endpoint ${endpointId}`);
  }

  /** Whether a sealed value is already under the current key. */
  isCurrent(sealed: string): boolean {
    return Keyring.keyIdOf(sealed) === this.#keyring.currentKeyId;
  }

  /** Opens a value and seals it again under the current key. */
  reseal(tenantId: string, endpointId: string | null, sealed: string): string {
    const context = endpointId === null ? apiKeyContext(tenantId) : secretContext(tenantId, endpointId);
    return this.#keyring.seal(this.#open(sealed, context, `tenant ${JSON.stringify(tenantId)}'s credential`), context);
  }

  #open(sealed: string, context: string, what: string): string {
    try {
      return this.#keyring.open(sealed, context);
    } catch (error) {
      if (!(error instanceof CannotOpen)) throw error;
      const reason =
        error.failure === 'unknown_key'
          ? `was sealed with an encryption key this process does not have (key id ${error.keyId}): pass it as encryptionKey or in encryptionKey.previous`
          : error.failure === 'tampered'
            ? 'does not open: it was altered or copied from another tenant'
            : 'is not a value sealed by integration-sdk/tenants';
      throw new ConfigurationError(`${what} ${reason}`);
    }
  }

  [inspect.custom](): string {
    return 'Credentials { [sealed] }';
  }

  toJSON(): Record<string, unknown> {
    return { currentKeyId: this.#keyring.currentKeyId };
  }
}
