/** One subpath export of package.json. */
export interface PackageEntry {
  /** The key in `exports`: `.`, `./webhooks`, `./inbox/sqlite`. */
  subpath: string;
  /** What users import: `integration-sdk`, `integration-sdk/inbox/sqlite`. */
  specifier: string;
  /** The built file's name in dist/ without extension, and tsup's entry name: `index`, `inbox-sqlite`. */
  name: string;
  /** The source file, relative to the repository root: `src/inbox/sqlite/index.ts`. */
  source: string;
}

export function packageEntries(): PackageEntry[];
export function buildEntries(): Record<string, string>;
