// The connections page: a key holder enters the key and sees the grants made with it (client,
// scopes, created, last used), and revokes any. The key is not remembered: revoking uses a
// short-lived server-side handle that names the key's index, never the key.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { KEY_TRIES_PER_REQUESTER, PENDING_TTL_MS } from './authorize.js';
import type { OAuthContext } from './context.js';
import { hashOf, newId, sameText } from './crypto.js';
import { cookieOf, field, readForm, sendHtml } from './io.js';
import { clientInWords, connectionsPage, errorPage } from './pages.js';

const HANDLE_TTL_MS = 10 * 60 * 1000;
const COOKIE = 'emcp_connections';

interface Handle {
  keyIndex: string;
}

export async function showConnections(ctx: OAuthContext, res: ServerResponse): Promise<void> {
  const csrf = newId();
  const secure = ctx.issuer().startsWith('https:');
  const cookie = `${COOKIE}=${csrf}; Path=/oauth/connections${secure ? '; Secure' : ''}; HttpOnly; SameSite=Strict; Max-Age=600`;
  sendHtml(res, 200, connectionsPage({ csrf }), { cookie });
}

export async function answerConnections(ctx: OAuthContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await readForm(req);
  const csrf = field(form, 'csrf') ?? '';
  const sameSite = req.headers.origin === undefined || req.headers.origin === ctx.issuer();
  if (!sameSite || csrf === '' || !sameText(csrf, cookieOf(req, COOKIE) ?? ''))
    return sendHtml(res, 403, errorPage('This form is not the one this browser was shown.'));
  if (field(form, 'action') === 'revoke') return revokeOne(ctx, res, form, csrf);
  const key = (field(form, 'api_key') ?? '').trim();
  if (key === '') return sendHtml(res, 400, connectionsPage({ csrf, message: 'Enter the tenant API key.' }));
  // Counted with the keys of consent pages: a key with connections is told apart from a made-up
  // one here, so this page must be no faster an oracle than the consent page.
  if ((await ctx.store.count(`keytries:${ctx.requester(req)}`, PENDING_TTL_MS)) > KEY_TRIES_PER_REQUESTER) {
    const message = `More than ${KEY_TRIES_PER_REQUESTER} keys were entered from this network in the last 10 minutes. Wait a few minutes, then try again.`;
    return sendHtml(res, 429, connectionsPage({ csrf, message }));
  }
  const grants = await ctx.grants.ofKey(key);
  // A handle only for a key that has connections (grants exist only for keys the API accepted):
  // a made-up key stores nothing.
  const handle = grants.length > 0 ? newId() : '';
  if (handle) await ctx.store.put(`connections:${hashOf(handle)}`, { keyIndex: ctx.grants.keyIndex(key) } satisfies Handle, HANDLE_TTL_MS);
  sendHtml(res, 200, connectionsPage({ csrf, listing: { handle, grants } }));
}

async function revokeOne(ctx: OAuthContext, res: ServerResponse, form: URLSearchParams, csrf: string): Promise<void> {
  const handle = await ctx.store.get<Handle>(`connections:${hashOf(field(form, 'handle') ?? '')}`);
  if (!handle) return sendHtml(res, 400, connectionsPage({ csrf, message: 'This list is older than 10 minutes: enter the key again.' }));
  const grant = await ctx.grants.get(field(form, 'grant') ?? '');
  if (!grant || grant.keyIndex !== handle.keyIndex) return sendHtml(res, 404, connectionsPage({ csrf, message: 'No such connection for this key.' }));
  await ctx.grants.revoke(grant.id);
  ctx.log.info(`oauth: a key holder revoked the grant of ${grant.clientId}`);
  const message = `Revoked the connection of ${clientInWords(grant.clientName, grant.clientId)}. Its tokens no longer work.`;
  sendHtml(res, 200, connectionsPage({ csrf, message }));
}
