import { ConfigurationError } from '../errors/integration-error.ts';
import { answerDelivery, reportError, type DeliveryAnswer } from './answer-delivery.ts';
import { checkReadBody, readNodeBody, type BodyLimits } from '../bounded-body.ts';
import type { NodeRequestLike, NodeResponseLike, NodeWebhookListener, WebhookHandlerOptions } from './handler-types.ts';
import type { WebhookRawBody } from './raw-body.ts';

// The #1 webhook pitfall (stripe-node #1294): a JSON parser ran first, and the signed bytes are gone.
const BODY_ALREADY_READ =
  "The body was already parsed or read by another middleware: mount express.raw({ type: 'application/json' }) on the webhook route, " +
  'registered before any app-wide express.json().';

/** The delivery rules as a Node `(req, res)` listener. */
export function createNodeListener(options: WebhookHandlerOptions): NodeWebhookListener {
  return (req, res) => {
    void answerDelivery({ method: req.method, headers: req.headers, readBody: rawBodyReader(req, options) }, options)
      .then((answer) => write(res, answer, req.complete === false))
      // Writing fails only when something else already answered: there is no one left to tell but onError.
      .catch((error: unknown) => reportError(options, error));
  };
}

/**
 * Where the raw body is: in `req.body` when a raw or text parser (express.raw, express.text) left
 * bytes or a string there, else still in the request stream. A parsed `req.body` cannot be verified.
 */
function rawBodyReader(req: NodeRequestLike, limits: BodyLimits): () => Promise<WebhookRawBody> {
  const body = req.body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    return async () => {
      checkReadBody(body, limits);
      return body;
    };
  }
  const parsed = body !== undefined && body !== null && !isUntouchedEmptyObject(req, body);
  if (parsed || req.readableEnded === true) {
    return async () => {
      throw new ConfigurationError(BODY_ALREADY_READ);
    };
  }
  return () => readNodeBody(req, limits);
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
