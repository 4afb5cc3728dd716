/**
 * This SDK's version, sent in the `User-Agent` header. Kept equal to `package.json` by a test.
 *
 * @example
 * ```ts
 * import { VERSION } from 'integration-sdk';
 * console.log(`integration-sdk ${VERSION}`);
 * ```
 */
export const VERSION = '0.1.0';
