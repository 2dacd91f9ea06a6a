// Review 22a: an OAuth connection's grant is the call's allow-list, and its consent page names
// inbox.manage "Open and close conversation tickets" and inbox.reply "Reply to customers and send
// WhatsApp messages". Attacked: a person grants the first and not the second; the model, refused
// inbox.ticket.reply and channel.whatsapp.send, opens a ticket with the customer with its text as
// the ticket's first message (written by the agent side, as a reply is). Found: it went out on
// inbox.manage alone. Now a ticket opened with a message also needs inbox.reply granted; one
// opened without a message needs only inbox.manage.
import { expect, it } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { countCarriedOut, makeClient, structuredOf, textOf } from './helpers.js';
import { signIn } from './oauth-helpers.js';
import { oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({ ENGAGE_CONFIRM: 'none' }, (ready) => ({ sandbox, service } = ready));

it('review22a: a grant without inbox.reply sends no message to a customer through inbox.ticket.create', async () => {
  const tokens = await signIn(service.url, sandbox.keys.full, { scopes: ['inbox.read', 'inbox.manage'] });
  const client = makeClient({ kind: 'v2-modern' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', service.url), { requestInit: { headers: { authorization: `Bearer ${tokens.access}` } } }),
  );
  try {
    const ticket = sandbox.tenant('A').tickets.find((candidate) => candidate.status === 'open')!;
    const call = (operationId: string, params: Record<string, unknown>) => client.callTool({ name: 'inbox_action', arguments: { operationId, params } });
    const reply = await call('inbox.ticket.reply', { ticketID: ticket.ticketID, message: 'Promo!' });
    expect(textOf(reply)).toContain('inbox.reply, which was not granted to this connection');

    const opened = await call('inbox.ticket.create', { msisdn: ticket.msisdn, channel: ticket.channel, message: 'Promo!' });
    expect(countCarriedOut(sandbox, 'inbox.ticket.create'), textOf(opened)).toBe(0);
    expect(opened.isError).toBe(true);
    expect(textOf(opened)).toContain('inbox.reply, which was not granted to this connection');

    // Without a message, inbox.manage is all it needs.
    const blank = await call('inbox.ticket.create', { msisdn: ticket.msisdn, channel: ticket.channel });
    expect(structuredOf(blank).outcome, textOf(blank)).toBe('done');
  } finally {
    await client.close();
  }
});
