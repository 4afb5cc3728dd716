/**
 * A fast, non-copying check compiled from a zod/mini schema, answering as zod's `safeParse` does.
 *
 * The schemas of this folder stay the single source of truth. This module walks a schema's
 * definition once (`schema._zod.def`) and generates a checker that reads the value without
 * rebuilding it: zod's parse copies every object it validates, which a webhook order or a
 * 500-result bulk answer pays for in full. On success the very value given is returned (unknown
 * fields kept, open enums being plain strings). Every definition it does not model exactly (checks
 * and refinements, formats, coercion, defaults, transforms, unions, literals, enums, strict or
 * stripping objects...) is handed to zod's own `safeParse` for that subtree, where a value other
 * than the input (a default, a transform, a copied object) counts as a failure. When the check
 * fails, zod parses the whole value and its result is returned: the issues are always zod's own,
 * and the verdict is never wrong, only slower to reach.
 *
 * The checker is generated code (`new Function`), one straight function per schema whose property
 * reads V8 can specialise: walking the definition at run time instead costs about ten times as
 * much. Where code generation is refused (Cloudflare Workers, a CSP, `z.config({ jitless: true })`)
 * zod's `safeParse` does the whole work, as it did before.
 */
import * as z from 'zod/mini';

// Whether zod would accept the value (its issues come from zod itself, on failure only).
type Check = (value: unknown) => boolean;

interface Def {
  readonly type: string;
  readonly checks?: readonly unknown[];
  readonly coerce?: boolean;
  readonly shape?: Readonly<Record<string, Schema>>;
  readonly catchall?: Schema;
  readonly element?: Schema;
  readonly innerType?: Schema;
  readonly keyType?: Schema;
  readonly valueType?: Schema;
}

interface Schema {
  readonly _zod: { readonly def: Def; readonly traits: Set<string>; readonly optin?: string; readonly optout?: string };
}

// Compiled on first use, once per schema; `null` where code generation is refused.
const compiled = new WeakMap<object, Check | null>();

/**
 * `z.safeParse(schema, value, params)`, from the schema's compiled check: on success the data is
 * `value` itself, not a copy; on failure, zod's own result (parse `params` included).
 */
export function checkSchema<T>(schema: z.ZodMiniType<T>, value: unknown, params?: z.core.ParseContext<z.core.$ZodIssue>): z.core.util.SafeParseResult<T> {
  return compile(schema as unknown as Schema)?.(value) ? { success: true, data: value as T } : z.safeParse(schema, value, params);
}

/** The generated check of `schema` (`null` where code generation is refused), for tests. */
export function compiledCheck(schema: z.core.$ZodType): ((value: unknown) => boolean) | null {
  return compile(schema as unknown as Schema);
}

function compile(schema: Schema): Check | null {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = null;
    // zod's own switch for code generation: a strict CSP reports even a refused `new Function`.
    if (!z.config().jitless) {
      // The generated code calls zod for what it does not model.
      const calls: Check[] = [];
      try {
        check = new Function('c', `return v=>{${generate(schema, 'v', calls, 0)}return true}`)(calls) as Check;
      } catch {
        // Refused after all: zod does the work.
      }
    }
    compiled.set(schema, check);
  }
  return check;
}

// No checks, refinements, formats or coercion, and the zod class of the definition type
// (`$ZodString` for `string`...): another class reusing a type name (z.exactOptional is an
// `optional`) parses differently.
function isPlain({ _zod: { def, traits } }: Schema): boolean {
  const { type } = def;
  return !def.checks?.length && !def.coerce && !traits.has('$ZodCheck') && !traits.has('$ZodExactOptional') && traits.has(`$Zod${type[0]!.toUpperCase()}${type.slice(1)}`);
}

// Statements that `return false` unless the value in variable `v` passes `schema`. Past a depth
// of 30 (a recursive schema, say) the schema's own compiled check is called.
function generate(schema: Schema, v: string, calls: Check[], depth: number): string {
  const { type, innerType, element, shape, catchall, keyType, valueType } = schema._zod.def;
  const w = `v${++depth}`;
  const inner = (child: Schema, name = w) => generate(child, name, calls, depth);
  // zod's output never has an own `__proto__` key (JSON.parse makes one): zod parses that object.
  const notObject = `typeof ${v}!=="object"||${v}===null||Array.isArray(${v})||Object.hasOwn(${v},"__proto__")`;
  // zod itself, for a value not modelled here; a value other than the input (a default, a
  // transform, a copy) fails the check, so that zod's own parse of the whole value is returned.
  const zod = () =>
    `if(!c[${calls.push((value) => {
      const result = z.safeParse(schema as unknown as z.ZodMiniType, value);
      return result.success && result.data === value;
    }) - 1}](${v}))return false;`;
  if (depth > 30) return `if(!c[${calls.push((value) => compile(schema)!(value)) - 1}](${v}))return false;`;
  if (isPlain(schema)) {
    switch (type) {
      case 'unknown':
      case 'any':
        return '';
      case 'string':
      case 'boolean':
        return `if(typeof ${v}!=="${type}")return false;`;
      case 'number':
        return `if(!Number.isFinite(${v}))return false;`;
      case 'nullable':
      case 'optional':
        // A defaulted inner schema substitutes a value for `undefined`: zod's to run.
        if (innerType!._zod.optin === 'defaulted') break;
        return `if(${v}!==${type === 'optional' ? 'undefined' : 'null'}){${inner(innerType!, v)}}`;
      case 'array':
        return `if(!Array.isArray(${v}))return false;for(let i${w}=0;i${w}<${v}.length;i${w}++){const ${w}=${v}[i${w}];${inner(element!)}}`;
      case 'object': {
        // With an `unknown` catchall (z.looseObject) unknown keys pass untouched; a stripping or
        // strict object changes or refuses them, and a symbol key is rare: zod's to run.
        if (!catchall || !isPlain(catchall) || catchall._zod.def.type !== 'unknown' || Object.getOwnPropertySymbols(shape).length) break;
        let code = `if(${notObject})return false;`;
        for (const key of Object.keys(shape!)) {
          const { optin, optout } = shape![key]!._zod;
          const check = inner(shape![key]!);
          const name = JSON.stringify(key);
          // zod's handlePropertyResult: an absent key passes only when optional (in), and then even
          // if its schema refuses `undefined` when optional on output too. zod skips `__proto__`.
          const absent = optin === undefined ? 'return false;' : optout === 'optional' ? '' : check;
          if (key !== '__proto__') code += `{const ${w}=${v}[${name}];if(${w}===undefined&&!(${name} in ${v})){${absent}}else{${check}}}`;
        }
        return code;
      }
      case 'record':
        // z.record(z.string(), z.unknown()) (or z.looseRecord): any plain object without symbol keys
        // passes; another record, an object of another class, symbol keys: zod's to judge.
        if (!isPlain(keyType!) || keyType!._zod.def.type !== 'string' || valueType!._zod.def.type !== 'unknown' || !isPlain(valueType!)) break;
        return `if(${notObject}||(typeof ${v}.constructor==="function"&&${v}.constructor!==Object)||Object.getOwnPropertySymbols(${v}).length){${zod()}}`;
    }
  }
  return zod();
}
