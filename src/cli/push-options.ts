// The options of `catalog push` / `stock push` as commander hands them over, in a module of their
// own: the plain push (push.ts) hands a push with a sync state to sync-push.ts, and both read them,
// so the layer reads one way (push.ts -> sync-push.ts -> sync-commands.ts -> here).

export interface PushOptions {
  format?: string;
  dryRun?: boolean;
  resume?: boolean;
  errors?: string;
  encoding?: string;
  /** `,` `;` or `tab`; detected from the header line when left out. */
  delimiter?: string;
  concurrency: number;
  json?: boolean;
}

/** The push options the delta sync adds (see sync-commands.ts's addSyncPushOptions). */
export interface SyncPushOptions extends PushOptions {
  state?: string;
  full?: boolean;
  maxAge?: number;
  deactivateMissing?: boolean;
  /** The exact number of missing items to deactivate when the guard asks for it. */
  confirmDeactivate?: number;
}
