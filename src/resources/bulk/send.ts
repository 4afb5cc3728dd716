import type { CallOptions, Requester } from '../../transport/types.ts';
import { windowResults } from './answers.ts';
import type { BulkRoute, ItemResultShape } from './route.ts';
import type { SettledWindow } from './run.ts';
import type { Window } from './window.ts';

/**
 * One request for a window's batch. `retry: 'safe'`: both routes write absolute values, so a
 * repeat cannot act twice. The caller's per-call options go to every batch's request.
 */
export async function sendWindow<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  requester: Requester,
  window: Window<Result>,
  call: CallOptions,
): Promise<SettledWindow<Result>> {
  const answer = await requester.send({
    method: route.method,
    path: route.path,
    body: { items: window.batch },
    schema: route.schema,
    retry: 'safe',
    options: call,
  });
  return { window, sync_id: answer.sync_id, results: windowResults(route, window, answer) };
}

/** A window whose items were all rejected locally: no request, `sync_id: null`. */
export function settleUnsent<Result extends ItemResultShape, Summary extends object>(
  route: BulkRoute<Result, Summary>,
  window: Window<Result>,
): SettledWindow<Result> {
  return { window, sync_id: null, results: windowResults(route, window, undefined) };
}
