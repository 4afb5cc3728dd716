// fast-check arbitraries derived from a zod/mini schema's definition, and mutations of values:
// the equivalence tests compare the compiled check with zod on valid values and on values that
// are almost valid, where a wrong verdict would hide.
import fc from 'fast-check';
import * as z from 'zod/mini';
import * as schemas from '../../../src/schemas/index.ts';

interface Def {
  type: string;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
  innerType?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
}

/** Every zod schema `src/schemas` exports, by name. */
export const EXPORTED_SCHEMAS: [string, z.core.$ZodType][] = (Object.entries(schemas) as [string, unknown][]).filter(
  (entry): entry is [string, z.core.$ZodType] => typeof entry[1] === 'object' && entry[1] !== null && '_zod' in entry[1],
);

/** Values JSON.parse can give, and a few it cannot (NaN, Infinity, undefined, -0). */
export const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, undefined, -0) },
);

const strings = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('pending', 'paid', 'a-value-not-listed', '', '__proto__'));
const numbers = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));

/** A value that `schema` accepts (for the constructs src/schemas uses). */
export function validOf(schema: z.core.$ZodType): fc.Arbitrary<unknown> {
  const def = schema._zod.def as Def;
  switch (def.type) {
    case 'string':
      return strings;
    case 'number':
      return numbers;
    case 'boolean':
      return fc.boolean();
    case 'unknown':
    case 'any':
      return jsonish;
    case 'nullable':
      return fc.option(validOf(def.innerType!), { nil: null });
    case 'optional':
      return fc.option(validOf(def.innerType!), { nil: undefined });
    case 'array':
      return fc.array(validOf(def.element!), { maxLength: 4 });
    case 'record':
      return fc.dictionary(fc.string({ maxLength: 5 }), validOf(def.valueType!), { maxKeys: 3 });
    case 'object': {
      const shape = def.shape!;
      const requiredKeys = Object.keys(shape).filter((key) => shape[key]!._zod.optin === undefined);
      const fields = fc.record(Object.fromEntries(Object.keys(shape).map((key) => [key, validOf(shape[key]!)])), { requiredKeys });
      // Unknown fields are kept, never a reason to refuse.
      return fc.tuple(fields, fc.dictionary(fc.string({ maxLength: 6 }), jsonish, { maxKeys: 2 })).map(([known, extra]) => ({ ...extra, ...known }));
    }
    default:
      throw new Error(`no arbitrary for a ${def.type} schema: add one`);
  }
}

type Path = (string | number)[];

function pathsOf(value: unknown, path: Path = []): Path[] {
  const paths: Path[] = [path];
  if (Array.isArray(value)) value.forEach((item, i) => paths.push(...pathsOf(item, [...path, i])));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...path, key]));
  return paths;
}

function withAt(value: unknown, path: Path, change: (container: Record<string | number, unknown>, key: string | number) => void): unknown {
  const copy = structuredClone(value);
  if (path.length === 0) return copy;
  let container = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) container = container[key] as Record<string | number, unknown>;
  change(container, path.at(-1)!);
  return copy;
}

/** `value` mutated once: a field dropped, a value replaced (another type, null, undefined), a field added. */
export function mutationOf(value: unknown): fc.Arbitrary<unknown> {
  const paths = pathsOf(value);
  const path = fc.constantFrom(...paths);
  return fc.oneof(
    fc.tuple(path, jsonish).map(([at, replacement]) => (at.length === 0 ? replacement : withAt(value, at, (c, k) => void (c[k] = replacement)))),
    fc.tuple(path, fc.constantFrom(null, undefined, 'a-value-not-listed', 0, true, [], {})).map(([at, replacement]) =>
      at.length === 0 ? replacement : withAt(value, at, (c, k) => void (c[k] = replacement)),
    ),
    path.map((at) => withAt(value, at, (c, k) => (Array.isArray(c) ? c.splice(Number(k), 1) : delete c[k]))),
    fc.tuple(path, fc.string({ maxLength: 6 }), jsonish).map(([at, key, extra]) =>
      withAt(value, [...at, key], (c, k) => {
        if (typeof c === 'object' && c !== null && !Array.isArray(c)) c[k] = extra;
      }),
    ),
  );
}
