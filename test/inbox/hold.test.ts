// The hold during a rotation (issue 28): the service delivers to a new endpoint as soon as it is
// registered, before the rotation has stored its secret. While the registry says a rotation is in
// progress, a delivery no known secret verifies is held (up to 5 s, reading the tenant's secrets
// again), so it is answered 2xx once the secret is stored, on the service's first attempt.
import { describe, expect, it } from 'vitest';
import type { Clock } from 'integration-sdk';
import { HOLD_STEP_MS } from '../../src/inbox/authenticate.ts';
import { tenantsInternals } from '../../src/tenants/create-tenants.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { tenantsWorld } from './support/tenants-world.ts';

/**
 * A manual clock that tells whoever waits when a held delivery goes back to wait (a timer of at
 * most HOLD_STEP_MS; the receiver's one-second poll of the registry's changes is not one).
 */
class SteppedClock extends ManualClock {
  #waiting: Array<() => void> = [];

  override setTimeout(callback: () => void, ms: number): () => void {
    const cancel = super.setTimeout(callback, ms);
    if (ms > HOLD_STEP_MS) return cancel;
    const woken = this.#waiting;
    this.#waiting = [];
    for (const wake of woken) wake();
    return cancel;
  }

  nextTimer(): Promise<void> {
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Moves time on by `ms` and waits until the held delivery waits again. */
  async step(ms: number): Promise<void> {
    const next = this.nextTimer();
    this.advance(ms);
    await next;
  }
}

async function rotationWorld() {
  const manual = new SteppedClock(Date.now());
  const world = await tenantsWorld({
    merchants: 1,
    // The service's real answer limit (10 s): a held delivery is answered well within it.
    sandbox: { timeScale: 1 },
    clock: manual as Clock,
  });
  await world.tenants.connect('loja-a', { apiKey: world.sandbox.merchants[0]!.keys[0]!.apiKey });
  await world.sandbox.idle();
  const registry = tenantsInternals(world.tenants)!.store;
  // Step 1 of a rotation, as the registry records it: in progress, then a second endpoint at the
  // same URL, whose secret is not stored yet.
  await registry.setRotating('loja-a', Date.now());
  const created = await world.tenants.client('loja-a').webhooks.create({ url: world.webhookUrl('loja-a'), events: ['order.created', 'order.status_changed'] });
  const held = manual.nextTimer();
  const order = world.sandbox.createOrder({ store_id: world.sandbox.merchants[0]!.storeIds[0]! });
  const toNew = () => world.sandbox.deliveries({ webhookId: created.id }).find((delivery) => delivery.event === 'order.created');
  // The delivery to the new endpoint reached the receiver and waits on the inbox's clock.
  await held;
  return { world, manual, registry, created, order, toNew };
}

describe('the hold during a rotation', () => {
  it('answers 2xx to a delivery signed with a secret stored 2 s after it arrived, on its first attempt', async () => {
    const { world, manual, registry, created, order, toNew } = await rotationWorld();
    // Still no secret that verifies it: held on, its tenant's secrets read again at each step.
    for (let held = 0; held < 2000; held += 250) await manual.step(250);
    expect(toNew()!.status).toBe('pending');
    await registry.putSecret({ tenantId: 'loja-a', endpointId: created.id, secret: world.seal('loja-a', created.id, created.secret), createdAt: Date.now() });
    manual.advance(250);
    const delivered = await world.sandbox.waitForDelivery(toNew()!.id);
    expect(delivered).toMatchObject({ status: 'delivered', attempt_count: 1, response_status: 200 });
    expect(world.answers.filter((answer) => answer.status !== 200)).toEqual([]);

    // Both endpoints' deliveries are kept; the later one is the copy, never run; the new secret is marked verified.
    const original = world.sandbox.deliveries({ event: 'order.created' }).find((delivery) => delivery.webhook_id !== created.id)!;
    expect(await world.inbox.entry(toNew()!.id, { tenant: 'loja-a' })).toMatchObject({ orderId: order.order_id, verifiedBy: created.id, copyOf: original.id, status: 'done' });
    await expect.poll(async () => (await registry.secrets('loja-a')).find((secret) => secret.endpointId === created.id)?.verifiedAt ?? null).not.toBeNull();
  });

  it('refuses it after 5 s when no secret stored meanwhile verifies it', async () => {
    const { world, manual, toNew } = await rotationWorld();
    for (let held = 0; held < 4750; held += 250) await manual.step(250);
    expect(toNew()!.status).toBe('pending');
    manual.advance(250);
    await expect.poll(() => world.answers.at(-1)?.status).toBe(400);
    expect(toNew()).toMatchObject({ status: 'retrying', attempt_count: 1 });
  });
});
