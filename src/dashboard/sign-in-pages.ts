// The pages of someone not (or no longer) signed in: styled like the others, and naming only the
// way in that is configured, so a token dashboard never asks for a password nor a Basic one for a link.
import { html } from 'hono/html';
import type { WayIn } from './auth.ts';
import { publicLayout } from './pages.ts';

type Html = ReturnType<typeof html>;

const NEW_LINK = html`To get a new link, restart <code>integration-sdk dashboard</code> (it prints a new one), or start it with
  <code>--token-file &lt;path&gt;</code> (or <code>DASHBOARD_TOKEN</code>) to sign in with a token of your own.`;

const HOW_IN: Record<WayIn, Html> = {
  token: html`<p>Open it with the sign-in link its operator gave you (its address with <code>?token=…</code>): the link signs you in and leaves the address bar.
  Scripts send <code>Authorization: Bearer &lt;token&gt;</code>.</p>`,
  'token-once': html`<p>Open it with the sign-in link printed when it started. That link signs in once.</p><p>${NEW_LINK}</p>`,
  basic: html`<p>Sign in with the user name and password its operator gave you: your browser asks for them when you reload this page.</p>`,
  authorize: html`<p>It lets people in through the sign-in of the application that serves it. Sign in there, then come back; if you are signed in,
  ask its operator for access.</p>`,
};

export function signInPage(base: string, way: WayIn): Html {
  return publicLayout(base, 'Sign-in required', html`<section class="sign-in"><h1>Sign-in required</h1><p>This dashboard needs a sign-in.</p>${HOW_IN[way]}</section>`);
}

export function linkUsedPage(base: string): Html {
  return publicLayout(
    base,
    'This link was already used',
    html`<section class="sign-in"><h1>This link was already used</h1>
  <p>The sign-in link printed when the dashboard started signs in once, so that a link seen in a terminal's scrollback or a log lets nobody else in.
  It has signed someone in already; it will not again.</p>
  <p>${NEW_LINK}</p></section>`,
  );
}

export function signedOutPage(base: string, way: WayIn): Html {
  return publicLayout(base, 'Signed out', html`<section class="sign-in"><h1>Signed out</h1><p>Your session has ended.</p>${HOW_IN[way]}</section>`);
}
