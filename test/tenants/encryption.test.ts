import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from 'integration-sdk';
import { apiKeyContext, CannotOpen, Keyring, secretContext } from '../../src/tenants/encryption.ts';

const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const apiKey = 'service_k1_0123456789abcdef0123456789abcdef';

function failureOf(run: () => unknown): CannotOpen {
  try {
    run();
  } catch (error) {
    if (error instanceof CannotOpen) return error;
    throw error;
  }
  throw new Error('expected CannotOpen');
}

describe('Keyring', () => {
  it('seals with AES-256-GCM under a fresh nonce each time, and opens only for the same tenant and place', () => {
    const keyring = new Keyring(keyA);
    const one = keyring.seal(apiKey, apiKeyContext('loja-1'));
    const two = keyring.seal(apiKey, apiKeyContext('loja-1'));
    expect(one).not.toBe(two);
    expect(one).not.toContain(apiKey);
    expect(one).not.toContain(Buffer.from(apiKey).toString('base64'));
    expect(keyring.open(one, apiKeyContext('loja-1'))).toBe(apiKey);
    // Copied onto another tenant, or into a secret's place: does not open.
    expect(failureOf(() => keyring.open(one, apiKeyContext('loja-2'))).failure).toBe('tampered');
    expect(failureOf(() => keyring.open(one, secretContext('loja-1', 'ep'))).failure).toBe('tampered');
    const flipped = one.slice(0, -3) + (one.at(-3) === 'A' ? 'B' : 'A') + one.slice(-2);
    expect(failureOf(() => keyring.open(flipped, apiKeyContext('loja-1'))).failure).toBe('tampered');
  });

  it('names the key a value was sealed with: another key is unknown; a previous key opens; current seals', () => {
    const old = new Keyring(keyA);
    const sealed = old.seal(apiKey, apiKeyContext('t'));
    const other = new Keyring(keyB);
    expect(failureOf(() => other.open(sealed, apiKeyContext('t')))).toMatchObject({ failure: 'unknown_key', keyId: old.currentKeyId });
    const rotating = new Keyring({ current: keyB, previous: [keyA] });
    expect(rotating.open(sealed, apiKeyContext('t'))).toBe(apiKey);
    expect(Keyring.keyIdOf(rotating.seal(apiKey, apiKeyContext('t')))).toBe(other.currentKeyId);
    expect(Keyring.keyIdOf(sealed)).toBe(old.currentKeyId);
  });

  it('refuses an encryption key that is not 32 bytes of base64, naming the rule and never the key', () => {
    const short = randomBytes(16).toString('base64');
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /encryptionKey is missing/],
      [short, /^encryptionKey must be 32 bytes \(AES-256\), got 16/],
      [{ current: short }, /^encryptionKey\.current must be 32 bytes \(AES-256\), got 16/],
      ['not base64 at all!', /is not base64/],
      [{ current: keyA, previous: [short] }, /encryptionKey\.previous\[0\] must be 32 bytes/],
      [{ current: keyA, previous: 'x' }, /previous must be an array/],
    ];
    for (const [option, message] of cases) {
      let error: unknown;
      try {
        new Keyring(option as string);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(message);
      if (typeof option === 'string') expect((error as Error).message).not.toContain(option);
    }
  });

  it('shows no key to util.inspect or JSON.stringify', () => {
    const keyring = new Keyring({ current: keyA, previous: [keyB] });
    const shown = inspect(keyring, { showHidden: true, depth: 5 }) + JSON.stringify(keyring);
    for (const key of [keyA, keyB]) {
      expect(shown).not.toContain(key);
      expect(shown).not.toContain(Buffer.from(key, 'base64').toString('hex'));
    }
  });
});
