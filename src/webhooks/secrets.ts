import { ConfigurationError } from '../errors/integration-error.ts';

/**
 * The endpoint secret (`whsec_...`, shown once when the endpoint was created), or several while
 * rotating: a delivery is genuine when any of them matches.
 */
export type WebhookSecret = string | readonly string[];

/** The secrets to try, refusing an empty one (an unset environment variable, usually). */
export function secretList(secret: WebhookSecret): readonly string[] {
  const list: readonly unknown[] = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : [];
  if (list.length === 0 || !list.every((item) => typeof item === 'string' && item.length > 0)) {
    throw new ConfigurationError(
      'The webhook secret is empty or missing: pass the whsec_ value shown when the endpoint was created (is the environment variable set?).',
    );
  }
  return list as readonly string[];
}

/** Hints about the configured secrets for a signature mismatch, without revealing them. */
export function secretHints(secrets: readonly string[]): string {
  let hints = '';
  if (secrets.some((secret) => secret !== secret.trim())) hints += ' A secret has surrounding whitespace (a line break from an env file?).';
  if (!secrets.some((secret) => secret.startsWith('whsec_'))) hints += ' No secret starts with whsec_: is it the API key?';
  return hints;
}
