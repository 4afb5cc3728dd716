export { IntegrationError, ConfigurationError } from './integration-error.ts';
export { ApiError, type ApiErrorInit } from './api-error.ts';
export * from './service-errors.ts';
export { InvalidInputError, type InputIssue } from './invalid-input-error.ts';
export { ConnectionError, TimeoutError, ResponseValidationError, BulkOperationError, RateLimiterUnavailableError, type ResponseIssue } from './client-errors.ts';
export { WebhookVerificationError, type WebhookVerificationReason } from './webhook-verification-error.ts';
export { ERROR_STATUS, type ErrorCode, type ItemErrorCode } from './codes.ts';
export { createApiError } from './create-api-error.ts';
export { TenantKeyInvalidError, TenantNotFoundError, TenantConnectError, TenantRotationError, type TenantConnectFailure, type TenantRotationFailure, type ForeignEndpoint } from './tenant-errors.ts';
