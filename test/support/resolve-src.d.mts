import type { ResolveHook, ResolveHookSync } from 'node:module';

/** Resolves `integration-sdk` and its subpaths to their sources in src/ (for `module.registerHooks`). */
export const resolveSync: ResolveHookSync;
/** The same, for `module.register`. */
export const resolve: ResolveHook;
