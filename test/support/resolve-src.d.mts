import type { ResolveHook } from 'node:module';

/** Resolves `integration-sdk` and its subpaths to their sources in src/. */
export const resolve: ResolveHook;
