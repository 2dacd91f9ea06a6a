// The campaign domain: broadcast campaigns over WhatsApp, Telegram or email.
import { z } from 'zod';
import {
  countOf,
  defineDomain,
  findRecord,
  inWords,
  isCount,
  live,
  notShown,
  pathId,
  plain,
  quote,
  quoteName,
  requiredText,
  type Fact,
  type Params,
  type PreviewReader,
  type WrittenBefore,
} from '@engage-mcp/shared';

const CAMPAIGNS = '/api/campaign/campaigns';
// Read for previews only. The quota's layout is not in the spec: it is shown in words, whatever its fields.
const QUOTA = '/api/ai/v1/quota';
const RECIPIENTS = '/api/user/users/campaign';

/** The campaign list as read (undefined when the look-up failed), and the campaign in it. */
async function readCampaign(params: Params, read: PreviewReader) {
  const campaigns = await read(CAMPAIGNS);
  return { campaigns, found: findRecord(campaigns, '_id', params.id) };
}

/**
 * A campaign's recipients, as the caps count them: its totalRecipients or the length of its
 * recipient list, whichever is larger (a list longer than the count is what the statement says).
 */
async function recipientCount(params: Params, read: PreviewReader): Promise<number | undefined> {
  const [{ found }, recipients] = await Promise.all([readCampaign(params, read), read(`${RECIPIENTS}/${encodeURIComponent(String(params.id))}`)]);
  const listed = Array.isArray(recipients) ? recipients.length : undefined;
  const total = isCount(found?.totalRecipients) ? found.totalRecipients : undefined;
  return total === undefined ? listed : Math.max(total, listed ?? 0);
}

/**
 * The recipient list's length where the campaign gives no count a person can trust, or where the
 * list holds more than its count says (a list may come paged, never longer): both are shown.
 */
function recipientsListed(total: unknown, recipients: unknown): string | undefined {
  if (!Array.isArray(recipients)) return undefined;
  if (!isCount(total)) return `Recipients: ${recipients.length}.`;
  return recipients.length > total
    ? `Recipients: its recipient list holds ${recipients.length}, more than the ${total} the campaign says: check it before agreeing.`
    : undefined;
}

/** The message quota's remaining count, where the quota read holds one under a field named for messages (its layout is not in the spec). */
function messagesLeft(quota: unknown): number | undefined {
  if (typeof quota !== 'object' || quota === null) return undefined;
  const counts = Object.entries(quota)
    .filter(([key]) => /message/i.test(key))
    .map(([, value]) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>).remaining : undefined));
  return counts.length === 1 && isCount(counts[0]) ? counts[0] : undefined;
}

/**
 * Said where the campaign has more recipients than messages are left: the quota line alone left a
 * model to compare two numbers a person agreed past. Live: the quota moves on its own.
 */
function quotaShort(found: Record<string, unknown> | undefined, recipients: unknown, quota: unknown): Fact | undefined {
  const counts = [found?.totalRecipients, Array.isArray(recipients) ? recipients.length : undefined].filter(isCount);
  const left = messagesLeft(quota);
  if (counts.length === 0 || left === undefined || left >= Math.max(...counts)) return undefined;
  const many = (count: number, what: string) => `${count.toLocaleString('en-US')} ${what}${count === 1 ? '' : 's'}`;
  return live(
    `Not enough message quota for every recipient: ${many(Math.max(...counts), 'recipient')}, ${many(left, 'message')} left. The API does not say whether it then refuses the send or sends until the quota runs out.`,
  );
}

/**
 * The campaign as the preview shows it, or that it could not be shown; a yes is bound to all of it
 * but the count sent so far, which a sending campaign moves on its own.
 */
function describeCampaign({ campaigns, found: campaign }: Awaited<ReturnType<typeof readCampaign>>): Fact {
  if (!campaign) return notShown('Campaign', campaigns);
  const what = (name: (value: unknown) => string) =>
    `Campaign: ${name(campaign.name)} on ${plain(campaign.channel)}, status ${plain(campaign.status)}, ${countOf(campaign.totalRecipients, 'recipient(s)')}`;
  return { text: `${what(quoteName)}, ${countOf(campaign.sentCount ?? 0, 'sent so far')}.`, bound: `${what(quote)}.` };
}

/** A name as a person tells it from another: case, spacing and compatibility forms (ｐｒｏｍｏ) aside. */
const nameAsTold = (name: unknown) => (typeof name === 'string' ? name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim() : undefined);
/** How many namesakes' ids a preview names; the count says how many more. */
const NAMESAKES_NAMED = 3;

/**
 * Other campaigns the list shows under the campaign's name (its text as read is cleaned: a
 * zero-width space in one is gone before anyone sees it). A person agrees to a name: without this,
 * two “Promo Desember” were told apart by their ids alone, and the other audience could be sent.
 */
function namesakes({ campaigns, found: campaign }: Awaited<ReturnType<typeof readCampaign>>): string | undefined {
  const name = nameAsTold(campaign?.name);
  if (!campaign || !name || !Array.isArray(campaigns)) return undefined;
  const ids = campaigns
    .filter((other): other is Record<string, unknown> => typeof other === 'object' && other !== null && other !== campaign && nameAsTold(other.name) === name)
    .map((other) => plain(other._id));
  if (ids.length === 0) return undefined;
  const more = ids.length > NAMESAKES_NAMED ? ` and ${ids.length - NAMESAKES_NAMED} more` : '';
  const which = ids.length === 1 ? 'Another campaign is' : `${ids.length} other campaigns are`;
  return `${which} shown under the same name: ${ids.slice(0, NAMESAKES_NAMED).join(', ')}${more}. Check that ${plain(campaign._id)} is the one meant before agreeing.`;
}

/**
 * The text that goes out. The spec's campaign list has no message field: it is shown if the API
 * includes one anyway (and a yes is bound to it), else as this server created the campaign, else
 * the preview says it is unknown. Those two come from this process's memory, not the API: shown,
 * not bound, so a yes given on one replica holds on another that did not create the campaign.
 */
function campaignMessage(campaign: Record<string, unknown> | undefined, params: Params, written: WrittenBefore): Fact {
  if (typeof campaign?.message === 'string') return `Message that goes out: ${quote(campaign.message)}`;
  const created = written('campaign.create').find((entry) => (entry.data as { _id?: unknown } | undefined)?._id === params.id);
  if (typeof created?.params.message === 'string')
    return live(
      `Message that goes out, as this server created the campaign (the API does not show a campaign's text, so an edit made in the tenant console since would not show here): ${quote(created.params.message)}`,
    );
  return live("Message: the API does not show a campaign's text and this server did not create it: check the text in the tenant console before agreeing.");
}

export const campaign = defineDomain('campaign', 'Campaigns', [
  {
    id: 'campaign.list',
    method: 'GET',
    path: CAMPAIGNS,
    scope: 'campaign.read',
    risk: 'safe',
    summary: 'Campaigns: _id, name, status, channel, totalRecipients, sentCount.',
    params: z.strictObject({}),
    view: 'campaign-dashboard',
    list: { idField: '_id' },
    // A campaign's name is written by whoever made it (another member of the team, another tool).
    customerText: true,
  },
  {
    id: 'campaign.analytics',
    method: 'GET',
    path: `${CAMPAIGNS}/analytics`,
    scope: 'campaign.read',
    risk: 'safe',
    summary: 'Performance summary: sent, opened, failed.',
    params: z.strictObject({}),
    view: 'campaign-dashboard',
    customerText: true,
  },
  {
    id: 'campaign.progress',
    method: 'GET',
    path: `${CAMPAIGNS}/{id}/progress`,
    scope: 'campaign.read',
    risk: 'safe',
    summary: "A campaign's sending progress.",
    params: z.strictObject({ id: pathId('campaign _id') }),
    view: 'campaign-dashboard',
    findIdsWith: 'campaign.list',
    customerText: true,
  },
  {
    id: 'campaign.create',
    method: 'POST',
    path: CAMPAIGNS,
    scope: 'campaign.manage',
    risk: 'confirm',
    summary: 'Create a draft on whatsapp|telegram|email; not sent.',
    params: z.strictObject({
      name: requiredText('campaign name', 200),
      message: requiredText('message text', 4096),
      channel: z.enum(['whatsapp', 'telegram', 'email'], { error: 'expected whatsapp, telegram or email' }).describe('whatsapp|telegram|email'),
    }),
    // Its answer and those below are untyped (spec): each may be the campaign, named by whoever made it (see campaign.list).
    customerText: true,
    verifyWith: 'campaign.list',
    confirmation: {
      effect: (p) =>
        `Create the draft campaign ${quote(p.name)} on ${String(p.channel)} with the message ${quote(p.message)}. Nothing is sent until campaign.send.`,
    },
  },
  {
    id: 'campaign.send',
    method: 'POST',
    path: `${CAMPAIGNS}/{id}/send`,
    scope: 'campaign.send',
    risk: 'destructive',
    summary: 'Send a campaign to all its recipients now; uses message quota.',
    params: z.strictObject({ id: pathId('campaign _id') }),
    findIdsWith: 'campaign.list',
    customerText: true,
    verifyWith: 'campaign.progress',
    afterDone: "The API has started sending to the campaign's recipients; campaign.progress shows how many have gone.",
    messages: recipientCount,
    confirmation: {
      effect: (p) => `Send campaign ${String(p.id)} now: real messages to real customers, each one using message quota.`,
      irreversible: 'sent messages cannot be recalled; campaign.cancel only stops the rest of the queue.',
      facts: async (p, read, written) => {
        const [campaign, recipients, quota] = await Promise.all([
          readCampaign(p, read),
          read(`${RECIPIENTS}/${encodeURIComponent(String(p.id))}`),
          read(QUOTA),
        ]);
        const { found } = campaign;
        // The counts a person checks first, the message (whole, however long) last: a long text put
        // the recipient warning and the quota where a host's dialog no longer shows them.
        return [
          describeCampaign(campaign),
          namesakes(campaign),
          recipientsListed(found?.totalRecipients, recipients),
          quota === undefined ? undefined : live(`Quota before sending: ${inWords(quota)}.`),
          quotaShort(found, recipients, quota),
          campaignMessage(found, p, written),
        ];
      },
    },
  },
  {
    id: 'campaign.cancel',
    method: 'POST',
    path: `${CAMPAIGNS}/{id}/cancel`,
    scope: 'campaign.control',
    risk: 'confirm',
    summary: "Stop a sending campaign's remaining queue.",
    params: z.strictObject({ id: pathId('campaign _id') }),
    findIdsWith: 'campaign.list',
    customerText: true,
    verifyWith: 'campaign.progress',
    confirmation: {
      effect: (p) => `Cancel campaign ${String(p.id)}: the rest of its queue is not sent; messages already sent stay sent.`,
      facts: async (p, read) => {
        const campaign = await readCampaign(p, read);
        return [describeCampaign(campaign), namesakes(campaign)];
      },
    },
  },
  {
    id: 'campaign.delete',
    method: 'DELETE',
    path: `${CAMPAIGNS}/{id}`,
    scope: 'campaign.manage',
    risk: 'destructive',
    summary: 'Delete a campaign and its statistics for good.',
    params: z.strictObject({ id: pathId('campaign _id') }),
    findIdsWith: 'campaign.list',
    customerText: true,
    verifyWith: 'campaign.list',
    confirmation: {
      effect: (p) => `Delete campaign ${String(p.id)} together with its statistics.`,
      irreversible: 'the campaign and its statistics are deleted irrecoverably.',
      facts: async (p, read) => {
        const campaign = await readCampaign(p, read);
        return [describeCampaign(campaign), namesakes(campaign)];
      },
    },
  },
]);
