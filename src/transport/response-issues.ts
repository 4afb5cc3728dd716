import * as z from 'zod/mini';
import type { ResponseIssue } from '../errors/index.ts';

type Validated<T> = { ok: true; value: T } | { ok: false; issues: ResponseIssue[] };

/** Validates a parsed 2xx body against a tolerant schema. Issues name paths and types, never values. */
export function validateResponse<T>(schema: z.ZodMiniType<T>, value: unknown): Validated<T> {
  // `reportInput` only to tell a missing field from a wrong one; the value never leaves this function.
  const result = z.safeParse(schema, value, { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issues: result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: describe(issue) })) };
}

function describe(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? `missing (expected ${issue.expected})` : `expected ${issue.expected}`;
    case 'invalid_union':
      return 'matches none of the expected shapes';
    default:
      return issue.code.replaceAll('_', ' ');
  }
}
