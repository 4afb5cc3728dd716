/**
 * Spec 6.1: the headers of every delivery, spelled as the service sends them. Lookups are
 * case-insensitive (HTTP header names are), so the verifier lower-cases these before comparing.
 */
export const DELIVERY_HEADERS = {
  event: 'X-Service-Event',
  deliveryId: 'X-Service-Delivery-Id',
  timestamp: 'X-Service-Timestamp',
  signature: 'X-Service-Signature-256',
} as const;

export type DeliveryHeaderName = (typeof DELIVERY_HEADERS)[keyof typeof DELIVERY_HEADERS];
