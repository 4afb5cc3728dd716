// `--deactivate-missing` on the command line: what the guard let through and what became of it. A
// deactivation that did not happen is never a quiet success: one the service refused or failed
// goes to the errors file and is tried again by the next push; a product last sent without stores
// has no store to switch off, and the person is told how to stop it being missing.
import type { Sync, SyncGuardError, SyncKind } from '../sync/index.ts';
import type { ErrorsFile } from './errors-file.ts';

/** What `--deactivate-missing` did. */
export interface Deactivation {
  deactivated: number;
  /** Confirmed, and not deactivated: the service refused or failed (the codes, each once). */
  failed: number;
  failedCodes: string[];
  /** The orphans last sent without stores: nothing to switch off, nothing sent. */
  skipped: string[];
  /** The guard's refusal in the command line's words: nothing was deactivated. */
  refused?: string;
}

/** Ids named in a sentence before the rest are left to the errors file. */
const NAMED = 5;

/** Runs the deactivation behind the guard, writing what did not happen to the errors file. */
export async function deactivateMissing(sync: Sync, kind: SyncKind, confirm: number | undefined, errors: ErrorsFile): Promise<Deactivation> {
  try {
    const outcome = await sync.deactivate(kind, sync.orphans(kind), { confirm });
    for (const failed of outcome.results) errors.write({ line: 0, external_id: failed.external_id, store_id: failed.store_id ?? '', code: failed.error.code, message: `deactivate: ${failed.error.message}` });
    const skipped = outcome.skipped > 0 ? await withoutStores(sync, kind, outcome.skipped) : [];
    for (const externalId of skipped) {
      errors.write({ line: 0, external_id: externalId, store_id: '', code: 'NO_STORES', message: `deactivate: last sent without stores: there is no store to switch off; integration-sdk sync forget ${kind} --external-id ${externalId} stops it being missing` });
    }
    const failedCodes = [...new Set(outcome.results.map((failed) => failed.error.code))];
    return { deactivated: outcome.deactivated, failed: outcome.errors, failedCodes, skipped };
  } catch (error) {
    if ((error as { name?: unknown })?.name !== 'SyncGuardError') throw error;
    return { deactivated: 0, failed: 0, failedCodes: [], skipped: [], refused: guardRefusal(error as SyncGuardError) };
  }
}

/** The orphans `deactivate` skipped: they stay orphans, without stores (it forgets only those done). */
async function withoutStores(sync: Sync, kind: SyncKind, count: number): Promise<string[]> {
  const ids: string[] = [];
  for await (const orphan of sync.orphans(kind)) {
    if (orphan.store_ids.length === 0) ids.push(orphan.external_id);
    if (ids.length >= count) break;
  }
  return ids;
}

/** The summary's words for it: `(2 deactivated, 1 failed, 1 skipped: sent without stores)`. */
export function deactivationCounts(deactivation: Deactivation): string {
  if (deactivation.refused) return '(none deactivated)';
  const failed = deactivation.failed > 0 ? `, ${deactivation.failed} failed` : '';
  const skipped = deactivation.skipped.length > 0 ? `, ${deactivation.skipped.length} skipped: sent without stores` : '';
  return `(${deactivation.deactivated} deactivated${failed}${skipped})`;
}

/**
 * Sentences for stderr on what was not deactivated (none when everything was): why, where the
 * list is, and what to do. `stateOption` is ` --state <location>` when it was given as a flag.
 */
export function deactivationNotes(deactivation: Deactivation, plan: { kind: SyncKind; missing: number; errorsPath: string; stateOption: string }): string[] {
  const { kind, missing, errorsPath, stateOption } = plan;
  const notes: string[] = [];
  const { failed, skipped } = deactivation;
  if (failed > 0) {
    notes.push(
      `${failed} of the ${missing} missing ${kind} items ${failed === 1 ? 'was' : 'were'} not deactivated (${deactivation.failedCodes.join(', ')}); they are listed in ${errorsPath}, and the next push with --deactivate-missing tries them again.`,
    );
  }
  if (skipped.length > 0) {
    const one = skipped.length === 1;
    const named = skipped.slice(0, NAMED).join(' ');
    const more = skipped.length > NAMED ? `, and ${skipped.length - NAMED} more in ${errorsPath}` : '';
    notes.push(
      `${skipped.length} missing ${kind} item${one ? '' : 's'} (${skipped.slice(0, NAMED).join(', ')}${more}) ${one ? 'was' : 'were'} last sent without stores: there is no store to switch off, so nothing was sent for ${one ? 'it' : 'them'}. ` +
        `${one ? 'It stays' : 'They stay'} missing, and counted by the guard, until forgotten: integration-sdk sync forget ${kind} --external-id ${named}${stateOption}`,
    );
  }
  return notes;
}

/** The guard's refusal in the command line's words: how many of how many, and the flag that confirms. */
function guardRefusal(error: SyncGuardError): string {
  const { kind, count, acknowledged, reason } = error;
  const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;
  const confirm = `run the same command with --confirm-deactivate ${count}`;
  if (reason === 'confirm-mismatch') {
    return `Nothing deactivated: --confirm-deactivate ${error.confirmed} does not match the ${count} ${kind} items missing from this file (of the ${acknowledged} acknowledged before); if they really left, ${confirm}.`;
  }
  const why =
    reason === 'empty-run'
      ? 'and this run read no items from the file, as a broken export (a header only, an empty file) would look'
      : `(${percent(count / acknowledged)}, above the ${percent(error.maxDeactivateShare)} allowed), as an export cut short would look`;
  return `Nothing deactivated: ${count} of the ${acknowledged} ${kind} items acknowledged before are missing from this file ${why}. Check the export; if they really left, ${confirm}.`;
}
