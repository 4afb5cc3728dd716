import { ConfigurationError } from '../errors/integration-error.ts';
import { answerDelivery, reportError, type DeliveryAnswer } from './answer-delivery.ts';
import { checkReadBody, readNodeBody, type BodyLimits } from '../bounded-body.ts';
import type { NodeRequestLike, NodeResponseLike, NodeWebhookListener, WebhookHandlerOptions } from './handler-types.ts';

// The #1 webhook pitfall (stripe-node #1294): a JSON parser ran first, and the signed bytes are gone.
const bodyAlreadyRead = (route: string) =>
  `The body was already parsed or read by another middleware: mount express.raw({ type: 'application/json' }) on the ${route} route, ` +
  'registered before any app-wide express.json().';

/** The delivery rules as a Node `(req, res)` listener. */
export function createNodeListener(options: WebhookHandlerOptions): NodeWebhookListener {
  return (req, res) => {
    void answerDelivery({ method: req.method, headers: req.headers, readBody: () => readRawNodeBody(req, options, 'webhook') }, options)
      .then((answer) => write(res, answer, req.complete === false))
      // Writing fails only when something else already answered: there is no one left to tell but onError.
      .catch((error: unknown) => reportError(options, error));
  };
}

/**
 * The raw body of a Node request, for the webhook handler and the inbox: bytes or text a raw or
 * text parser (express.raw, express.text) left in `req.body`, held to `maxBodyBytes`, else the
 * request stream read within the limits. A `req.body` another parser already turned into an object
 * cannot be verified: `ConfigurationError` naming the fix for the `route` ('webhook', 'inbox').
 */
export async function readRawNodeBody(req: NodeRequestLike, limits: BodyLimits, route: string): Promise<string | Uint8Array> {
  const body = req.body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    checkReadBody(body, limits);
    return body;
  }
  const parsed = body !== undefined && body !== null && !isUntouchedEmptyObject(req, body);
  if (parsed || req.readableEnded === true) throw new ConfigurationError(bodyAlreadyRead(route));
  return readNodeBody(req, limits);
}

// body-parser 1.x (Express 4) sets req.body = {} even when it skips a request; the stream is then unread.
function isUntouchedEmptyObject(req: NodeRequestLike, body: unknown): boolean {
  return req.readableEnded === false && typeof body === 'object' && Object.keys(body as object).length === 0;
}

// An answer given before the body ended (a 400 on the headers, a 413) closes the connection:
// kept alive, node:http would read and discard the rest of the body, however large.
function write(res: NodeResponseLike, answer: DeliveryAnswer, bodyUnread: boolean): void {
  res.statusCode = answer.status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  if (bodyUnread) res.setHeader('Connection', 'close');
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
  res.end(answer.body);
}
