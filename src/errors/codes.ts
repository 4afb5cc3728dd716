/**
 * The error vocabulary of spec part 7: every code and its HTTP status. Shared by the client (to map
 * answers to classes) and the sandbox (to answer them).
 */
export const ERROR_STATUS = {
  FEATURE_DISABLED: 503,
  INVALID_API_KEY: 401,
  AUTH_UNAVAILABLE: 503,
  INSUFFICIENT_SCOPE: 403,
  FORBIDDEN_STORE: 403,
  VALIDATION_ERROR: 400,
  NOT_FOUND: 404,
  CUSTOMER_NOT_FOUND: 404,
  NO_PROGRAM: 404,
  INSUFFICIENT_BALANCE: 422,
  COUPON_INVALID: 422, // 404 when the coupon does not exist
  SSRF_BLOCKED: 400,
  WEBHOOK_LIMIT_REACHED: 409,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  POINTS_UNAVAILABLE: 503,
  COUPON_UNAVAILABLE: 503,
  UNMAPPED_ITEMS: 422,
} as const;

/** A code of spec part 7 that the service answers as a whole-request error. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Codes that appear only per item inside bulk results (spec 4.2 rule 8, 4.3). */
export type ItemErrorCode = 'VALIDATION_ERROR' | 'FORBIDDEN_STORE' | 'STORE_WRITE_FAILED' | 'INTERNAL' | 'PRODUCT_NOT_FOUND';
