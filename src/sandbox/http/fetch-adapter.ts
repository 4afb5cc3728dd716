import { readWebBody } from '../../bounded-body.ts';
import { SANDBOX_MAX_BODY_BYTES, type Core } from './core.ts';
import { isDropped } from './exchange.ts';

/** The address the per-IP bucket sees for requests that came through `handle()`. */
export const HANDLE_IP = 'handle()';

/**
 * Answers a Fetch `Request` with the same core as the server, without a socket. Only the path and
 * query are used, so any origin routed here (msw) reaches the emulator.
 */
export function fetchHandler(core: Core): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const result = await core({
      method: request.method,
      url: url.pathname + url.search,
      headers: request.headers,
      readBody: async () => decode(await readWebBody(request, { maxBodyBytes: SANDBOX_MAX_BODY_BYTES })),
      ip: HANDLE_IP,
    });
    if (isDropped(result)) {
      // What fetch itself does when the connection drops before an answer.
      throw new TypeError('fetch failed', { cause: new Error('sandbox fault: connection dropped after the request was processed') });
    }
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
}

export function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}
