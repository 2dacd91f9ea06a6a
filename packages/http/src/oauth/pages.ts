// The two pages a person sees: the consent page (which client, where it sends you back, which API
// permissions, one field for the tenant key) and the connections page (the grants made with a
// key, each revocable). Plain HTML, no script; every value escaped.
import { isLoopbackHost } from './clients.js';

/** The API's scopes in plain words; a scope not listed here is shown by its name. */
const SCOPE_WORDS: Record<string, string> = {
  'contact.read': 'See your contacts',
  'contact.manage': 'Add, change and import contacts',
  'contact.delete': 'Delete contacts',
  'campaign.read': 'See campaigns, their progress and analytics',
  'campaign.manage': 'Create and delete campaigns',
  'campaign.send': 'Send campaigns to their recipients',
  'campaign.control': 'Cancel running campaigns',
  'inbox.read': 'See conversation tickets and their messages',
  'inbox.manage': 'Open and close conversation tickets',
  'inbox.reply': 'Reply to customers and send WhatsApp messages',
  'channel.read': 'See your connected messaging channels and templates',
  'product.read': 'See your products',
  'product.manage': 'Add, change and delete products',
  'billing.read': 'See payments and the subscription plan',
  'quota.read': 'See remaining quota and its usage',
  'tenant.setting.read': 'See the company profile',
  'tenant.read': 'See the tenants the key can reach',
};

export const isWriteScope = (scope: string) => !scope.endsWith('.read');

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}' +
  'fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0}label{display:block;margin:.25rem 0}' +
  '.warn{background:#fff4e5;border:1px solid #f0b86e;padding:.5rem .75rem;border-radius:6px}' +
  '.error{background:#fdecea;border:1px solid #e57373;padding:.5rem .75rem;border-radius:6px}' +
  'input[type=password]{width:100%;padding:.4rem;font:inherit}button{font:inherit;padding:.4rem 1rem;margin-right:.5rem}' +
  'table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top}';

export function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="referrer" content="same-origin"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`
  );
}

export interface ConsentView {
  requestId: string;
  csrf: string;
  clientName: string;
  clientId: string;
  redirectUri: string;
  resource: string;
  /** Every scope offered, in order, and which are ticked. */
  scopes: Array<{ scope: string; checked: boolean }>;
  error?: string;
}

export function consentPage(view: ConsentView): string {
  const redirect = new URL(view.redirectUri);
  // Every loopback address registration takes (127.0.0.0/8 too), not only the usual three.
  const localOnly = isLoopbackHost(redirect.hostname);
  // An app's private-use scheme is no site, whatever it is named (claude.ai:), and it may carry a
  // web address (microsoft-edge:https://…): it is named as an app, with the whole URI as parsed
  // (what the browser goes to, invisible and direction characters percent-encoded).
  const where =
    redirect.protocol === 'https:' || redirect.protocol === 'http:'
      ? `<strong>${escapeHtml(redirect.host)}</strong>`
      : `the app on this computer that opens <code>${escapeHtml(redirect.protocol)}</code> links, at <code>${escapeHtml(redirect.href)}</code>`;
  const warning = localOnly
    ? '<p class="warn">This client sends you back to <strong>this computer</strong> (localhost). Allow it only if you started the connection here yourself.</p>'
    : '';
  const boxes = view.scopes
    .map(({ scope, checked }) => {
      const words = escapeHtml(SCOPE_WORDS[scope] ?? scope);
      const kind = isWriteScope(scope) ? ' <em>(changes data)</em>' : '';
      const box = `<input type="checkbox" name="scope" value="${escapeHtml(scope)}"${checked ? ' checked' : ''}>`;
      return `<label>${box} ${words}${kind} <code>${escapeHtml(scope)}</code></label>`;
    })
    .join('');
  return page(
    'Connect to the messaging API',
    `<p>${clientHtml(view.clientName, view.clientId)}${isDescribed(view.clientId) ? '' : ','} asks to use your tenant's messaging API through ${escapeHtml(view.resource)}.</p>` +
      `<p>After you allow it, you are sent back to ${where}.</p>${warning}` +
      (view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : '') +
      `<form method="post" action="/oauth/authorize" autocomplete="off">` +
      `<input type="hidden" name="request" value="${escapeHtml(view.requestId)}"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">` +
      `<fieldset><legend>What it may do</legend>${boxes}</fieldset>` +
      '<label for="api_key">Your tenant API key (from the tenant console, API key settings). ' +
      'It is checked once and stored encrypted; it is not shown again.</label>' +
      `<input id="api_key" type="password" name="api_key" autocomplete="off" spellcheck="false">` +
      `<p><button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></p></form>` +
      `<p><small>Client id: <code>${escapeHtml(view.clientId)}</code>. ` +
      'See or end connections at <a href="/oauth/connections">/oauth/connections</a>.</small></p>',
  );
}

/** Whether the client is described by a metadata document (its client_id is the document's URL). */
const isDescribed = (clientId: string) => clientId.startsWith('https://');

/**
 * Who a client is, as HTML. A client metadata document names its client freely; the host it came
 * from (over https) is what was checked, so it stands beside the name in bold. A client registered
 * here (RFC 7591) has nothing checked: its name is shown as one it gave itself, quoted after words
 * that say so, never in that form (one registered as "Claude (described by claude.ai)" read as the
 * document of claude.ai).
 */
function clientHtml(name: string, clientId: string): string {
  if (isDescribed(clientId)) return `<strong>${escapeHtml(name)}</strong> (described by <strong>${escapeHtml(new URL(clientId).host)}</strong>)`;
  return `A client that calls itself “<strong>${escapeHtml(name)}</strong>”, registered here`;
}

/** The same in plain words, for messages (escaped where they are shown). */
export function clientInWords(name: string, clientId: string): string {
  if (isDescribed(clientId)) return `${name} (described by ${new URL(clientId).host})`;
  return `the client that calls itself “${name}” (registered here)`;
}

/** `back`: where the app asked to be sent, offered as a link the person chooses (never followed by itself). */
export function errorPage(message: string, back?: { href: string; to: string }): string {
  const next = back
    ? `<p>To tell the app, follow this link back to <strong>${escapeHtml(back.to)}</strong>: <a href="${escapeHtml(back.href)}" rel="noreferrer">return to the app</a>.</p>`
    : '<p>Go back to the app and start again.</p>';
  return page('This connection cannot continue', `<p class="error" role="alert">${escapeHtml(message)}</p>${next}`);
}

export interface ConnectionsView {
  csrf: string;
  /** After a key was entered: a short-lived handle for revoking, and its grants. */
  listing?: { handle: string; grants: Array<{ id: string; clientName: string; clientId: string; scopes: string[]; createdAt: number; lastUsedAt: number }> };
  message?: string;
}

const day = (time: number) => new Date(time).toISOString().replace('T', ' ').slice(0, 16);

export function connectionsPage(view: ConnectionsView): string {
  const notice = view.message ? `<p class="warn" role="status">${escapeHtml(view.message)}</p>` : '';
  const keyForm =
    `<form method="post" action="/oauth/connections" autocomplete="off"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">` +
    `<label for="api_key">Tenant API key</label><input id="api_key" type="password" name="api_key" autocomplete="off">` +
    `<p><button type="submit" name="action" value="list">Show connections</button></p></form>`;
  if (!view.listing) return page('Connections made with your key', `${notice}${keyForm}`);
  const rows = view.listing.grants
    .map(
      (grant) =>
        `<tr><td>${clientHtml(grant.clientName, grant.clientId)}<br><small><code>${escapeHtml(grant.clientId)}</code></small></td>` +
        `<td>${grant.scopes.map((scope) => escapeHtml(scope)).join('<br>')}</td><td>${day(grant.createdAt)}</td><td>${day(grant.lastUsedAt)}</td>` +
        `<td><form method="post" action="/oauth/connections"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">` +
        `<input type="hidden" name="handle" value="${escapeHtml(view.listing?.handle ?? '')}">` +
        `<input type="hidden" name="grant" value="${escapeHtml(grant.id)}">` +
        `<button type="submit" name="action" value="revoke">Revoke</button></form></td></tr>`,
    )
    .join('');
  const table = view.listing.grants.length
    ? `<table><tr><th>Client</th><th>Permissions</th><th>Created (UTC)</th><th>Last used (UTC)</th><th></th></tr>${rows}</table>`
    : '<p>No connections were made with this key.</p>';
  return page('Connections made with your key', `${notice}${table}`);
}
