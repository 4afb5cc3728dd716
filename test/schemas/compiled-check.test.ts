import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import * as z from 'zod/mini';
import { checkSchema, compiledCheck } from '../../src/schemas/compiled-check.ts';
import { OrderSchema } from '../../src/schemas/order.ts';
import { validateResponse } from '../../src/transport/response-issues.ts';
import { ORDER } from '../webhooks/support/deliveries.ts';
import { EXPORTED_SCHEMAS, jsonish, mutationOf, validOf } from './support/arbitraries.ts';

const RUNS = { numRuns: 200 };

// What validateResponse answered before the compiled check: zod's parse and the same issue format.
function zodValidateResponse(schema: z.core.$ZodType, value: unknown) {
  const result = z.safeParse(schema, value, { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    issues: result.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message:
        issue.code === 'invalid_type'
          ? issue.input === undefined
            ? `missing (expected ${issue.expected})`
            : `expected ${issue.expected}`
          : issue.code === 'invalid_union'
            ? 'matches none of the expected shapes'
            : issue.code.replaceAll('_', ' '),
    })),
  };
}

/**
 * checkSchema and validateResponse answer as zod did, the compiled check never accepts what zod
 * refuses, and (`exact`, for schemas it models entirely) it gives zod's verdict itself and the
 * value itself on success.
 */
function expectSameAsZod(schema: z.core.$ZodType, value: unknown, exact = true): void {
  const zod = z.safeParse(schema, value);
  const check = compiledCheck(schema);
  expect(check, 'the schema compiles').not.toBeNull();
  if (exact) expect(check!(value), 'the compiled verdict').toBe(zod.success);
  else if (!zod.success) expect(check!(value), 'the compiled verdict').toBe(false);

  const result = checkSchema(schema as z.ZodMiniType, value);
  expect(result.success).toBe(zod.success);
  if (result.success && exact) expect(result.data, 'the value itself, not a copy').toBe(value);
  else if (result.success) expect(result.data).toEqual(zod.data);
  else expect(result.error.issues.map((issue) => issue.path)).toEqual(zod.error!.issues.map((issue) => issue.path));

  const validated = validateResponse(schema as z.ZodMiniType, value);
  const expected = zodValidateResponse(schema, value);
  expect(validated.ok).toBe(expected.ok);
  if (validated.ok) expect(validated.value).toEqual(expected.value);
  else expect(validated).toEqual(expected);
}

test('src/schemas exports schemas, each with a compiled check', () => {
  expect(EXPORTED_SCHEMAS.length).toBeGreaterThanOrEqual(25);
  for (const [, schema] of EXPORTED_SCHEMAS) expect(compiledCheck(schema)).toBeTypeOf('function');
});

describe.each(EXPORTED_SCHEMAS)('%s: the compiled check answers as zod', (_name, schema) => {
  test('on any JSON-ish value', () => {
    fc.assert(fc.property(jsonish, (value) => expectSameAsZod(schema, value)), RUNS);
  });

  test('on valid values, unknown fields and unlisted enum values included', () => {
    fc.assert(
      fc.property(validOf(schema), (value) => {
        expect(z.safeParse(schema, value).success, 'the arbitrary gives valid values').toBe(true);
        expectSameAsZod(schema, value);
      }),
      RUNS,
    );
  });

  test('on valid values with a field dropped, retyped, nulled or added', () => {
    fc.assert(
      fc.property(
        validOf(schema).chain((value) => mutationOf(value)),
        (value) => expectSameAsZod(schema, value),
      ),
      RUNS,
    );
  });
});

describe('the order of a real delivery', () => {
  test('is accepted as the same object, unknown fields kept', () => {
    const order = { ...structuredClone(ORDER), added_later: { x: 1 }, source_channel: 'a-channel-not-listed' };
    const result = checkSchema(OrderSchema, order);
    expect(result.success && result.data).toBe(order);
  });

  test('with every field in turn removed or retyped, answers as zod, with zod issue paths', () => {
    const paths: (string | number)[][] = [];
    const walk = (value: unknown, path: (string | number)[]) => {
      paths.push(path);
      if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) walk(item, [...path, Array.isArray(value) ? Number(key) : key]);
    };
    walk(ORDER, []);
    for (const path of paths.slice(1)) {
      for (const change of ['drop', 'retype', 'null'] as const) {
        const order = structuredClone(ORDER) as Record<string | number, unknown>;
        let container = order;
        for (const key of path.slice(0, -1)) container = container[key] as Record<string | number, unknown>;
        const key = path.at(-1)!;
        if (change === 'drop') delete container[key];
        else container[key] = change === 'null' ? null : typeof container[key] === 'number' ? 'text' : 42;
        expectSameAsZod(OrderSchema, order);
      }
    }
  });
});

describe('what the compiled check leaves to zod', () => {
  test('a refined field: zod judges that field only, the rest stays compiled and uncopied', () => {
    const schema = z.looseObject({ name: z.string().check(z.minLength(3)), n: z.number() });
    expectSameAsZod(schema, { name: 'abc', n: 1 });
    expectSameAsZod(schema, { name: 'ab', n: 1 });
    expect(checkSchema(schema, { name: 'ab', n: 1 }).error?.issues.map((issue) => [issue.path, issue.code])).toEqual([[['name'], 'too_small']]);
  });

  test('formats, integers, literals, enums, unions and custom checks', () => {
    const schema = z.looseObject({
      email: z.optional(z.email()),
      count: z.optional(z.int()),
      kind: z.optional(z.literal('a')),
      level: z.optional(z.enum(['low', 'high'])),
      either: z.optional(z.union([z.string(), z.number()])),
      even: z.optional(z.custom<number>((value) => typeof value === 'number' && value % 2 === 0)),
    });
    for (const value of [
      {},
      { email: 'a@b.co' },
      { email: 'nope' },
      { count: 3 },
      { count: 3.5 },
      { kind: 'a' },
      { kind: 'b' },
      { level: 'high' },
      { level: 'mid' },
      { either: 1 },
      { either: true },
      { even: 2 },
      { even: 3 },
    ]) {
      expectSameAsZod(schema, value);
    }
  });

  test('a default or a transform: zod output is returned, never the input silently', () => {
    const schema = z.looseObject({ tag: z._default(z.string(), 'none'), upper: z.optional(z.pipe(z.string(), z.transform((s) => s.toUpperCase()))) });
    const value = { upper: 'abc' };
    const result = checkSchema(schema, value);
    expect(result).toEqual({ success: true, data: { tag: 'none', upper: 'ABC' } });
    expect(result.data).not.toBe(value);
    expect(value).toEqual({ upper: 'abc' });
  });

  test('strict and stripping objects, exact optionals, other records', () => {
    const strict = z.strictObject({ a: z.string() });
    expectSameAsZod(strict, { a: 'x' }, false);
    expectSameAsZod(strict, { a: 'x', b: 1 }, false);
    const strip = z.object({ a: z.string() });
    expect(checkSchema(strip, { a: 'x', b: 1 })).toEqual({ success: true, data: { a: 'x' } });
    const exact = z.looseObject({ a: z.exactOptional(z.string()) });
    expectSameAsZod(exact, {});
    expectSameAsZod(exact, { a: undefined });
    const numbers = z.record(z.string(), z.number());
    expectSameAsZod(numbers, { a: 1 }, false);
    expectSameAsZod(numbers, { a: '1' }, false);
  });

  test('a record given an object of another class, or symbol keys', () => {
    const record = z.record(z.string(), z.unknown());
    class Custom {
      a = 1;
    }
    expectSameAsZod(record, new Custom(), false);
    expectSameAsZod(record, { [Symbol('s')]: 1 }, false);
    expectSameAsZod(record, Object.create(null));
    expectSameAsZod(record, { constructor: 'not a function' });
    expectSameAsZod(z.looseRecord(z.string(), z.unknown()), { [Symbol('s')]: 1, a: 1 }, false);
  });

  test('an own __proto__ key, as JSON.parse makes it: zod parses that value, and drops the key', () => {
    const order = structuredClone(ORDER) as { metadata: unknown; customer: unknown };
    order.metadata = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    expectSameAsZod(OrderSchema, order, false);
    const result = checkSchema(OrderSchema, order);
    expect(result.success && Object.hasOwn(result.data.metadata, '__proto__')).toBe(false);
    const customer = JSON.parse('{"__proto__": 1, "name": "x", "phone": "1", "email": "e", "address": 1}');
    expectSameAsZod(OrderSchema, { ...order, customer }, false);
  });

  test('a recursive schema', () => {
    interface Node {
      name: string;
      children: Node[];
    }
    const NodeSchema: z.ZodMiniType<Node> = z.looseObject({
      name: z.string(),
      get children() {
        return z.array(NodeSchema);
      },
    });
    let deep: Node = { name: 'leaf', children: [] };
    for (let i = 0; i < 40; i++) deep = { name: `n${i}`, children: [deep] };
    expectSameAsZod(NodeSchema, deep);
    (deep.children[0]!.children[0] as { name: unknown }).name = 5;
    expectSameAsZod(NodeSchema, deep);
  });

  test('with code generation switched off (z.config({ jitless: true })), zod does all the work', () => {
    const schema = z.looseObject({ a: z.string() });
    z.config({ jitless: true });
    try {
      expect(compiledCheck(schema)).toBeNull();
      const value = { a: 'x' };
      const result = checkSchema(schema, value);
      expect(result).toEqual({ success: true, data: value });
      expect(checkSchema(schema, { a: 1 }).success).toBe(false);
    } finally {
      z.config({ jitless: false });
    }
  });

  test('keys that need quoting in generated code', () => {
    const schema = z.looseObject({ 'a"b': z.string(), "c'\\d\n": z.number(), '\u2028': z.boolean(), constructor: z.optional(z.string()) });
    expectSameAsZod(schema, { 'a"b': 'x', "c'\\d\n": 1, '\u2028': true });
    expectSameAsZod(schema, { 'a"b': 'x', "c'\\d\n": '1', '\u2028': true });
    expectSameAsZod(schema, { 'a"b': 'x', "c'\\d\n": 1, '\u2028': true, constructor: 1 });
  });
});
