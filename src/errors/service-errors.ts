import type { Scope } from '../schemas/health.ts';
import type { OpenEnum } from '../schemas/open-enum.ts';
import { ApiError, type ApiErrorInit } from './api-error.ts';

/** 401 `INVALID_API_KEY`: the key is missing, malformed, revoked or rotated. Not retried. */
export class AuthenticationError extends ApiError {
  static override readonly errorName: string = 'AuthenticationError';
}

/** 403 `FORBIDDEN_STORE`: a store outside the key's `store_ids`. */
export class ForbiddenStoreError extends ApiError {
  static override readonly errorName: string = 'ForbiddenStoreError';
}

/** 403 `INSUFFICIENT_SCOPE`: the key lacks the route's scope. */
export class InsufficientScopeError extends ApiError {
  static override readonly errorName: string = 'InsufficientScopeError';
  /** `details.required_scope`, e.g. `catalog:write` (a scope this SDK does not know yet still arrives as its string). */
  readonly requiredScope: OpenEnum<Scope> | undefined;
  /** `details.granted_scopes`: what the key has. */
  readonly grantedScopes: OpenEnum<Scope>[];

  constructor(init: ApiErrorInit) {
    super(init);
    const details = asRecord(init.details);
    this.requiredScope = typeof details.required_scope === 'string' ? details.required_scope : undefined;
    this.grantedScopes = Array.isArray(details.granted_scopes) ? details.granted_scopes.filter((s): s is string => typeof s === 'string') : [];
  }
}

/** One problem of a rejected payload: where (`path`) and what (`message`). */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** 400 `VALIDATION_ERROR`: the payload is invalid; `issues` lists `{ path, message }`. */
export class ValidationError extends ApiError {
  static override readonly errorName: string = 'ValidationError';
  /** `details` of the envelope as `{ path, message }[]`; empty when the service sent none. */
  readonly issues: ValidationIssue[];

  constructor(init: ApiErrorInit) {
    super(init);
    this.issues = Array.isArray(init.details)
      ? init.details.map((entry) => {
          const record = asRecord(entry);
          return { path: String(record.path ?? ''), message: String(record.message ?? '') };
        })
      : [];
  }
}

/** 400 `SSRF_BLOCKED`: the webhook URL is not HTTPS, resolves to a private address, or does not resolve. */
export class SsrfBlockedError extends ApiError {
  static override readonly errorName: string = 'SsrfBlockedError';
}

/** 404 `NOT_FOUND`: missing, or outside the key's store scope (existence is not confirmed). */
export class NotFoundError extends ApiError {
  static override readonly errorName: string = 'NotFoundError';
}

/** 404 `CUSTOMER_NOT_FOUND`: loyalty is find-only and never creates a customer. */
export class CustomerNotFoundError extends NotFoundError {
  static override readonly errorName: string = 'CustomerNotFoundError';
}

/** 404 `NO_PROGRAM`: the merchant has no active loyalty program. */
export class NoProgramError extends NotFoundError {
  static override readonly errorName: string = 'NoProgramError';
}

/** 404 (unknown coupon) or 422 (inactive, expired, limit reached) `COUPON_INVALID`. */
export class CouponInvalidError extends ApiError {
  static override readonly errorName: string = 'CouponInvalidError';
}

/** 422 `INSUFFICIENT_BALANCE`: a points debit larger than the balance. */
export class InsufficientBalanceError extends ApiError {
  static override readonly errorName: string = 'InsufficientBalanceError';
}

/** 422 `UNMAPPED_ITEMS` (legacy): `externalIds` lists the product keys with no mapped product. */
export class UnmappedItemsError extends ApiError {
  static override readonly errorName: string = 'UnmappedItemsError';
  /** The product `external_id`s without a mapped product, from `details`. */
  readonly externalIds: string[];

  constructor(init: ApiErrorInit) {
    super(init);
    const details = init.details;
    const list = Array.isArray(details) ? details : asRecord(details).external_ids;
    this.externalIds = Array.isArray(list) ? list.filter((id): id is string => typeof id === 'string') : [];
  }
}

/** 409 `WEBHOOK_LIMIT_REACHED`: 5 endpoints already; delete one first. */
export class WebhookLimitReachedError extends ApiError {
  static override readonly errorName: string = 'WebhookLimitReachedError';
}

/** 409 `CONFLICT`: a concurrent points credit; retried automatically with the same `idempotency_key`. */
export class ConflictError extends ApiError {
  static override readonly errorName: string = 'ConflictError';
}

/**
 * 429 `RATE_LIMITED`. Thrown when retries are used up, or at once when `Retry-After` is longer
 * than the client's `maxRetryAfterMs`.
 */
export class RateLimitError extends ApiError {
  static override readonly errorName: string = 'RateLimitError';
  /** `Retry-After` in milliseconds; `undefined` when the header was absent or unreadable. */
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit & { retryAfterMs?: number | undefined }) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 500 `INTERNAL`: a transient failure of the service; retried with backoff. */
export class InternalServerError extends ApiError {
  static override readonly errorName: string = 'InternalServerError';
}

/** Any 503: retried with backoff, except `FeatureDisabledError`. */
export class ServiceUnavailableError extends ApiError {
  static override readonly errorName: string = 'ServiceUnavailableError';
}

/** 503 `FEATURE_DISABLED`: the integration is not enabled for this environment. A setting, not a fault: never retried. */
export class FeatureDisabledError extends ServiceUnavailableError {
  static override readonly errorName: string = 'FeatureDisabledError';
}

/** 503 `AUTH_UNAVAILABLE`: the service's authentication failed closed; retried with backoff. */
export class AuthUnavailableError extends ServiceUnavailableError {
  static override readonly errorName: string = 'AuthUnavailableError';
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
