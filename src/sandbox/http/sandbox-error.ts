import { ERROR_STATUS, type ErrorCode } from '../../errors/codes.ts';
import { json, type CoreResponse } from './exchange.ts';

/** One `{ path, message }` entry of a validation error's `details` (spec 2.10). */
export interface Issue {
  path: string;
  message: string;
}

/**
 * A whole-request error, thrown by any layer and turned into the envelope of spec 2.10 by the
 * core. The status comes from the shared vocabulary unless a code has two (COUPON_INVALID).
 */
export class SandboxError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { details?: unknown; status?: number; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'SandboxError';
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

export function validationError(issues: Issue[], message = 'The request is invalid; see details.'): SandboxError {
  return new SandboxError('VALIDATION_ERROR', message, { details: issues });
}

/** The envelope, with `details` omitted (never null) when there is none. */
export function errorResponse(error: SandboxError): CoreResponse {
  const body: { code: string; message: string; details?: unknown } = { code: error.code, message: error.message };
  if (error.details !== undefined && error.details !== null) body.details = error.details;
  return json(error.status, { error: body }, error.headers);
}
