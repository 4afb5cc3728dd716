import { describe, expect, it } from 'vitest';
import { ConfigurationError } from 'integration-sdk';
import { postgresStore } from 'integration-sdk/inbox/postgres';

// No server needed: these are refused before any connection is made.
describe('postgresStore options and life cycle', () => {
  it.each([[undefined], [{}], [{ connectionString: 'postgres://localhost/erp', schema: 'Inbox' }], [{ connectionString: 'postgres://localhost/erp', schema: 'a"; drop' }]])(
    'refuses %o with a ConfigurationError',
    (options) => {
      expect(() => postgresStore(options as never)).toThrow(ConfigurationError);
    },
  );

  it('refuses work once closed with a ConfigurationError, instead of opening a new pool', async () => {
    // A port nothing listens on: a new pool would fail with a connection error, not a ConfigurationError.
    const store = postgresStore({ connectionString: 'postgres://erp:pw@127.0.0.1:1/erp' });
    await store.close();
    await expect(store.insert({ deliveryId: 'a', event: 'webhook.test', orderId: null, ts: 1, payload: '{}', known: true, receivedAt: 1 })).rejects.toThrow(ConfigurationError);
    await expect(store.stats(1)).rejects.toThrow(ConfigurationError);
    await expect(store.migrate()).rejects.toThrow(ConfigurationError);
  });
});
