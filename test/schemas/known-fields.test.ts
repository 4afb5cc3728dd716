// Answers are read tolerantly (fields this SDK version does not know are kept at run time), but
// their types are exact: a misspelt field is a compile error (issue 29 item 2). The type half of
// this file is checked by `tsc --noEmit -p .` (CI's type check): each `@ts-expect-error` below
// fails it if the typo compiles, and `everyAnswerIsExact` fails it if any answer type, deep,
// carries the index signature zod's `looseObject` infers.
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook } from 'integration-sdk/webhooks';
import type {
  Address,
  BatchResult,
  BulkUpsertResponse,
  BulkUpsertResult,
  CouponRedemption,
  CouponValidation,
  CreatedWebhook,
  ErrorEnvelope,
  Health,
  ItemError,
  KnownWebhookEvent,
  LoyaltyBalance,
  LoyaltyCustomer,
  LoyaltyEntry,
  LoyaltyProgram,
  LoyaltyStatement,
  Order,
  OrderCreatedEvent,
  OrderItem,
  OrderStatusChange,
  OrderStatusChangedEvent,
  PointsResult,
  ProductResult,
  StockBatchResult,
  StockItemResult,
  StockResponse,
  StockResult,
  UnknownWebhookEvent,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
  WebhookTestData,
  WebhookTestEvent,
  WebhookTestResult,
  WithIdempotencyKey,
  WithUnknownFields,
} from '../../src/index.ts';
import { HEALTH, ORDER, fakeService, json, makeClient } from '../support/fake-service.ts';

/** `true` when no object inside `T` (through arrays, unions and optional fields) has both named fields and an index signature. */
type NoLooseObject<T> = T extends readonly (infer Element)[]
  ? NoLooseObject<Element>
  : T extends object
    ? string extends keyof T
      ? [NamedKey<T>] extends [never]
        ? true // a map of the merchant's own keys (an order's `metadata`), not an answer with typed fields
        : false
      : { [K in keyof T]-?: NoLooseObject<T[K]> }[keyof T] extends true
        ? true
        : false
    : true;
type NamedKey<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: 0 };

/** Every answer type `integration-sdk` exports, and the webhook events. */
interface AnswerTypes {
  Health: Health;
  Order: Order;
  OrderItem: OrderItem;
  Address: Address;
  OrderStatusChange: OrderStatusChange;
  ItemError: ItemError;
  ProductResult: ProductResult;
  BulkUpsertResponse: BulkUpsertResponse;
  BulkUpsertResult: BulkUpsertResult;
  BatchResult: BatchResult;
  StockItemResult: StockItemResult;
  StockResponse: StockResponse;
  StockResult: StockResult;
  StockBatchResult: StockBatchResult;
  CreatedWebhook: CreatedWebhook;
  WebhookEndpoint: WebhookEndpoint;
  WebhookDelivery: WebhookDelivery;
  WebhookTestResult: WebhookTestResult;
  LoyaltyProgram: LoyaltyProgram;
  LoyaltyCustomer: LoyaltyCustomer;
  LoyaltyBalance: LoyaltyBalance;
  LoyaltyEntry: LoyaltyEntry;
  LoyaltyStatement: LoyaltyStatement;
  PointsResult: WithIdempotencyKey<PointsResult>;
  CouponValidation: CouponValidation;
  CouponRedemption: WithIdempotencyKey<CouponRedemption>;
  ErrorEnvelope: ErrorEnvelope;
  WebhookEvent: WebhookEvent;
  OrderCreatedEvent: OrderCreatedEvent;
  OrderStatusChangedEvent: OrderStatusChangedEvent;
  WebhookTestEvent: WebhookTestEvent;
  WebhookTestData: WebhookTestData;
  UnknownWebhookEvent: UnknownWebhookEvent;
  KnownWebhookEvent: KnownWebhookEvent;
}

// A type error here names the answer type that accepts any field name.
const everyAnswerIsExact: { [Name in keyof AnswerTypes]: NoLooseObject<AnswerTypes[Name]> } = {
  Health: true,
  Order: true,
  OrderItem: true,
  Address: true,
  OrderStatusChange: true,
  ItemError: true,
  ProductResult: true,
  BulkUpsertResponse: true,
  BulkUpsertResult: true,
  BatchResult: true,
  StockItemResult: true,
  StockResponse: true,
  StockResult: true,
  StockBatchResult: true,
  CreatedWebhook: true,
  WebhookEndpoint: true,
  WebhookDelivery: true,
  WebhookTestResult: true,
  LoyaltyProgram: true,
  LoyaltyCustomer: true,
  LoyaltyBalance: true,
  LoyaltyEntry: true,
  LoyaltyStatement: true,
  PointsResult: true,
  CouponValidation: true,
  CouponRedemption: true,
  ErrorEnvelope: true,
  WebhookEvent: true,
  OrderCreatedEvent: true,
  OrderStatusChangedEvent: true,
  WebhookTestEvent: true,
  WebhookTestData: true,
  UnknownWebhookEvent: true,
  KnownWebhookEvent: true,
};

describe('answer types are exact; unknown fields stay reachable at run time', () => {
  it('lists every answer type in the exactness check', () => {
    expect(Object.values(everyAnswerIsExact).every((exact) => exact)).toBe(true);
  });

  it('a typo in a field of health() or orders.get() does not compile; WithUnknownFields reads what the service added', async () => {
    const service = fakeService(
      json(200, { ...HEALTH, region: 'sa-east-1' }),
      json(200, { ...ORDER, loyalty_tier: 'gold', customer: { ...ORDER.customer, document: '123' } }),
    );
    const client = makeClient(service.fetch);
    const health = await client.health();
    const order = await client.orders.get(ORDER.order_id);

    expect(health.scopes).toEqual(HEALTH.scopes);
    // @ts-expect-error `scopez` is not a field of Health: a typo is a compile error
    expect(health.scopez).toBeUndefined();
    // @ts-expect-error nor is a misspelt nested field of Order
    expect(order.customer.adress).toBeUndefined();
    // @ts-expect-error nor a field inside an array of Order
    expect(order.items[0]?.quantiy).toBeUndefined();
    // An order's `metadata` is the merchant's own map: any key, each `unknown`.
    expect(order.metadata.anything).toBeUndefined();

    // The fields this SDK version does not know are kept, and read through the documented cast.
    expect((health as WithUnknownFields<Health>).region).toBe('sa-east-1');
    expect((order as WithUnknownFields<Order>).loyalty_tier).toBe('gold');
    expect((order.customer as WithUnknownFields<Order['customer']>).document).toBe('123');
  });

  it('a typo in the data of a webhook event does not compile; its unknown fields are kept', () => {
    const secret = 'whsec_known_fields_test_secret';
    const signed = signWebhook({ payload: { event: 'order.created', data: { ...ORDER, loyalty_tier: 'gold' } }, secret });
    const event = verifyWebhook(signed.body, signed.headers, secret);
    if (event.event !== 'order.created') throw new Error(`expected order.created, got ${event.event}`);

    expect(event.data.display_number).toBe(ORDER.display_number);
    // @ts-expect-error `custmer` is not a field of the order in `order.created`
    expect(event.data.custmer).toBeUndefined();
    // @ts-expect-error nor is a misspelt field of the delivery envelope
    expect(event.delivery_idd).toBeUndefined();
    expect((event.data as WithUnknownFields<Order>).loyalty_tier).toBe('gold');
  });
});
