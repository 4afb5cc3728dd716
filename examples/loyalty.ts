// Balance by phone, an idempotent points credit, and a coupon checked then redeemed.
//
//   INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=... node examples/loyalty.ts <phone> <store_id>
import { CouponInvalidError, CustomerNotFoundError, IntegrationClient } from 'integration-sdk';

const [phone = '+55 11 91234-5678', storeId = ''] = process.argv.slice(2);
const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY ?? '', baseUrl: process.env.INTEGRATION_BASE_URL ?? '' });

try {
  const { points } = await client.loyalty.balance({ phone });
  console.log(`balance: ${points} points`);

  // A key derived from your own data makes the credit safe to repeat after a crash.
  const credit = await client.loyalty.credit({ phone, points: 10, idempotency_key: `example-credit-${storeId}`, description: 'example' });
  console.log(`credited: entry ${credit.entry.id}, balance ${credit.balance} (key ${credit.idempotency_key})`);

  const check = await client.loyalty.validateCoupon({ code: 'WELCOME10', phone, store_id: storeId, order_total: 100 });
  if (check.valid) {
    // No idempotency_key given: the SDK makes one, reuses it on retries, and returns it.
    const { redemption, idempotency_key } = await client.loyalty.redeemCoupon({ code: 'WELCOME10', phone, store_id: storeId });
    console.log(`redeemed ${redemption.code} for ${redemption.discount} (key ${idempotency_key})`);
  }
} catch (error) {
  if (error instanceof CustomerNotFoundError) console.error('No loyalty customer with that phone: loyalty never creates customers.');
  else if (error instanceof CouponInvalidError) console.error(`Coupon refused (${error.status === 404 ? 'unknown' : 'inactive, expired or used up'}).`);
  else throw error;
  process.exitCode = 1;
}
