import { ApiError, type ApiErrorInit } from './api-error.ts';
import {
  AuthenticationError,
  AuthUnavailableError,
  ConflictError,
  CouponInvalidError,
  CustomerNotFoundError,
  FeatureDisabledError,
  ForbiddenStoreError,
  InsufficientBalanceError,
  InsufficientScopeError,
  InternalServerError,
  NoProgramError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
  SsrfBlockedError,
  UnmappedItemsError,
  ValidationError,
  WebhookLimitReachedError,
} from './service-errors.ts';

type ApiErrorClass = new (init: ApiErrorInit) => ApiError;

const BY_CODE: Record<string, ApiErrorClass> = {
  INVALID_API_KEY: AuthenticationError,
  INSUFFICIENT_SCOPE: InsufficientScopeError,
  FORBIDDEN_STORE: ForbiddenStoreError,
  VALIDATION_ERROR: ValidationError,
  NOT_FOUND: NotFoundError,
  CUSTOMER_NOT_FOUND: CustomerNotFoundError,
  NO_PROGRAM: NoProgramError,
  COUPON_INVALID: CouponInvalidError,
  INSUFFICIENT_BALANCE: InsufficientBalanceError,
  UNMAPPED_ITEMS: UnmappedItemsError,
  SSRF_BLOCKED: SsrfBlockedError,
  WEBHOOK_LIMIT_REACHED: WebhookLimitReachedError,
  CONFLICT: ConflictError,
  RATE_LIMITED: RateLimitError,
  INTERNAL: InternalServerError,
  FEATURE_DISABLED: FeatureDisabledError,
  AUTH_UNAVAILABLE: AuthUnavailableError,
  POINTS_UNAVAILABLE: ServiceUnavailableError,
  COUPON_UNAVAILABLE: ServiceUnavailableError,
};

// An unknown code gets the class of its status family: retries and `instanceof` checks still work.
const BY_STATUS: Record<number, ApiErrorClass> = {
  401: AuthenticationError,
  404: NotFoundError,
  429: RateLimitError,
  500: InternalServerError,
  503: ServiceUnavailableError,
};

/**
 * Maps an error answer to its class: by `code` first (spec part 7), then by HTTP status family,
 * else a plain `ApiError` with the code as sent.
 */
export function createApiError(init: ApiErrorInit & { retryAfterMs?: number | undefined }): ApiError {
  // Own keys only: a code such as `constructor` or `__proto__` must not pick an Object.prototype member.
  const ErrorClass = (Object.hasOwn(BY_CODE, init.code) ? BY_CODE[init.code] : undefined) ?? BY_STATUS[init.status] ?? ApiError;
  return new ErrorClass(init);
}
