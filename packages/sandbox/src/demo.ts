// `npm start`: a short, real session. The sandbox runs in this process; the seven built servers
// run as a host runs them, over stdio; every step below is a real tool call.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DOMAINS, launchServer, type DomainName, type LaunchedServer } from './launch.js';
import { startSandbox, type Sandbox } from './sandbox.js';

const out = (line = '') => process.stdout.write(`${line}\n`);
const step = (title: string) => out(`\n== ${title}`);
const indent = (text: string, max = 12) => {
  const lines = text.split('\n');
  const shown = lines.slice(0, max).map((line) => `   ${line.length > 160 ? `${line.slice(0, 160)}…` : line}`);
  if (lines.length > max) shown.push(`   … (${lines.length - max} more lines)`);
  return shown.join('\n');
};

type Call = (domain: DomainName, name: string, args: Record<string, unknown>) => Promise<CallToolResult>;
type Servers = Record<DomainName, LaunchedServer>;

async function main(): Promise<void> {
  const sandbox = await startSandbox({ sendStepMs: 300 });
  out('engage-mcp demo: seven MCP servers against a local sandbox of the Tenant API');
  out(`Sandbox on ${sandbox.baseUrl}, tenant "${sandbox.tenant('A').name}", with a key that has every scope.`);
  out('No elicitation in this client, so risky operations come back as a preview with a confirmation token.');

  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_LOG_LEVEL: 'error' };
  const servers = {} as Servers;
  try {
    step('Starting the seven servers over stdio and listing their tools');
    await Promise.all(DOMAINS.map(async (domain) => (servers[domain] = await launchServer(domain, env))));
    await listTools(servers);
    const call = caller(servers);
    await sendCampaign(call, sandbox);
    await replyToTicket(call);

    step('Remaining quota');
    await call('billing', 'billing_get', { operationId: 'billing.quota' });

    step('What the sandbox carried out (each once)');
    for (const entry of sandbox.carriedOut()) out(`   ${entry.operationId} ${JSON.stringify(entry.params).slice(0, 100)}`);
    out('\nDone. Add the servers to your host with mcp-config.example.json; see the README.');
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.close().catch(() => undefined)));
    await sandbox.close();
  }
}

/** One line per server: its tools, each with how many operations it offers and whether it only reads. */
async function listTools(servers: Servers): Promise<void> {
  for (const domain of DOMAINS) {
    const { tools } = await servers[domain].client.listTools();
    const summary = tools.map((tool) => {
      const ops = (tool.inputSchema.properties?.operationId as { enum?: string[] } | undefined)?.enum ?? [];
      return `${tool.name} (${ops.length} operation${ops.length === 1 ? '' : 's'}${tool.annotations?.readOnlyHint ? ', read-only' : ''})`;
    });
    out(`   ${domain.padEnd(8)} ${summary.join(', ')}`);
  }
}

/** Calls a tool, printing the call and (the start of) its answer. */
function caller(servers: Servers): Call {
  return async (domain, name, args) => {
    out(`\n-> ${name} ${JSON.stringify(args)}`);
    const result = (await servers[domain].client.callTool({ name, arguments: args })) as CallToolResult;
    const text = result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
    out(indent(`${result.isError ? 'ERROR: ' : ''}${text}`));
    return result;
  };
}

const structured = (result: CallToolResult) => (result.structuredContent ?? {}) as Record<string, unknown>;

/** Find a contact, create a campaign, send it through a preview and its confirmation, and watch it go out. */
async function sendCampaign(call: Call, sandbox: Sandbox): Promise<void> {
  step('Find a contact');
  await call('contact', 'contact_read', { operationId: 'contact.list', search: 'budi', fields: ['name', 'msisdn'], limit: 3 });

  step('Create a campaign (a draft: nothing is sent yet)');
  const created = await call('campaign', 'campaign_action', {
    operationId: 'campaign.create',
    params: { name: 'Demo: Promo Akhir Tahun', message: 'Diskon 25% untuk semua batik sampai 31 Desember!', channel: 'whatsapp' },
  });
  const campaignId = (structured(created).data as { _id?: string } | undefined)?._id;
  if (!campaignId) throw new Error('the demo could not create its campaign');

  step('Ask to send it: the server answers with a preview, and sends nothing');
  const preview = await call('campaign', 'campaign_action', { operationId: 'campaign.send', params: { id: campaignId } });
  const token = structured(preview).confirmationToken as string | undefined;
  if (!token) throw new Error('expected a confirmation preview');
  out(`   (sandbox: campaign.send carried out ${sandbox.carriedOut().filter((entry) => entry.operationId === 'campaign.send').length} time(s) so far)`);

  step('The user says yes: the same call with the token sends it, once');
  await call('campaign', 'campaign_action', { operationId: 'campaign.send', params: { id: campaignId }, confirmationToken: token });

  step('Replaying the spent token sends nothing');
  await call('campaign', 'campaign_action', { operationId: 'campaign.send', params: { id: campaignId }, confirmationToken: token });

  step('Watch its progress');
  for (let poll = 0; poll < 20; poll++) {
    const progress = structured(await call('campaign', 'campaign_read', { operationId: 'campaign.progress', params: { id: campaignId } }));
    if ((progress.data as { status?: string } | undefined)?.status !== 'sending') break;
    await new Promise((resolve) => setTimeout(resolve, 350));
  }
}

async function replyToTicket(call: Call): Promise<void> {
  step('Reply to an open ticket (confirmed the same way)');
  const open = await call('inbox', 'inbox_read', { operationId: 'inbox.ticket.byStatus', params: { status: 'open' }, limit: 1 });
  const ticketID = ((structured(open).data as Array<{ ticketID?: string }> | undefined) ?? [])[0]?.ticketID;
  if (!ticketID) throw new Error('expected an open ticket');
  const replyArgs = { operationId: 'inbox.ticket.reply', params: { ticketID, message: 'Halo kak, masih tersedia. Mau kami kirim hari ini?' } };
  const replyPreview = await call('inbox', 'inbox_action', replyArgs);
  await call('inbox', 'inbox_action', { ...replyArgs, confirmationToken: structured(replyPreview).confirmationToken });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
