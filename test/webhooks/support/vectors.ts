import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One case of the shared signature vectors, computed independently with Python. */
export interface SignatureVector {
  name: string;
  secret: string | string[];
  headers: Record<string, string>;
  body_base64: string;
  /** Epoch seconds. */
  now: number;
  tolerance_s: number;
  /** Only meaningful as a Node-style record: Fetch `Headers` would normalise the value. */
  record_only?: boolean;
  expect: { valid: true; event: string } | { valid: false; reason: string; also_accept?: string[] };
}

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const shared = `${repoRoot}../shared/vectors/webhook-signatures.json`;
const fixture = `${repoRoot}test/fixtures/webhook-signatures.json`;

/** The shared vectors when the shared folder is there, else the copy kept with the tests. */
export const vectorFile = existsSync(shared) ? shared : fixture;
export const vectors: SignatureVector[] = (JSON.parse(readFileSync(vectorFile, 'utf8')) as { vectors: SignatureVector[] }).vectors;

export function bodyBytes(vector: SignatureVector): Buffer {
  return Buffer.from(vector.body_base64, 'base64');
}

/** The body as Buffer, Uint8Array and, when it is valid UTF-8, as a string. */
export function bodyForms(vector: SignatureVector): Array<[string, string | Uint8Array]> {
  const bytes = bodyBytes(vector);
  const forms: Array<[string, string | Uint8Array]> = [
    ['Buffer', bytes],
    ['Uint8Array', new Uint8Array(bytes)],
  ];
  try {
    forms.push(['string', new TextDecoder('utf-8', { fatal: true }).decode(bytes)]);
  } catch {
    // Not UTF-8: no string can hold these bytes.
  }
  return forms;
}

/** The headers as a Node-style record and, unless record-only, as Fetch `Headers`. */
export function headerForms(vector: SignatureVector): Array<[string, Record<string, string> | Headers]> {
  const forms: Array<[string, Record<string, string> | Headers]> = [['record', vector.headers]];
  if (!vector.record_only) forms.push(['Headers', new Headers(vector.headers)]);
  return forms;
}
