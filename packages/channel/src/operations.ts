// The channel domain: connected messaging channels, WhatsApp templates and one-off sends.
import { z } from 'zod';
import {
  brief,
  defineDomain,
  inWords,
  msisdn,
  notShown,
  pathId,
  plain,
  quote,
  requiredText,
  type Fact,
  type Params,
  type PreviewReader,
} from '@engage-mcp/shared';

const TEMPLATES = '/api/channel/v1/whatsapp/cloud/templates';
/**
 * How much of one template record a preview shows: its text is what the customer gets, so it is
 * shown whole (a body is at most 1,024 characters, with header, footer and buttons besides); only
 * a record far past any template is cut.
 */
const TEMPLATE_CHARS = 6000;
/** How many records of the name a preview shows (one per language); the others are named by language. */
const TEMPLATES_SHOWN = 3;

/** Whether inWords shows every text in `value` whole: it shows a field's text as plain() does, cut past 100 characters. */
const wordsWhole = (value: unknown): boolean =>
  typeof value === 'string'
    ? plain(value) === value || plain(value) === quote(value)
    : typeof value !== 'object' || value === null || Object.values(value).every(wordsWhole);

/** A template record in words where that shows its texts whole (a body is what the customer gets), else as its JSON; either up to `max`. */
const recordText = (item: Record<string, unknown>, max: number) => (wordsWhole(item) ? inWords(item, max) : brief(item, max));

/** How many languages of the records not shown are named: a list may hold a name many times over. */
const LANGUAGES_NAMED = 5;

/** The languages of records not shown, each once, the first LANGUAGES_NAMED of them; none where a record has no language field. */
function otherLanguages(rest: Array<Record<string, unknown>>): string {
  if (!rest.every((item) => Object.hasOwn(item, 'language'))) return '';
  const languages = [...new Set(rest.map((item) => plain(item.language)))];
  const named = languages.slice(0, LANGUAGES_NAMED).join(', ');
  if (languages.length === 1) return `, in language ${named}`;
  return `, in ${languages.length.toLocaleString('en-US')} other languages: ${named}${languages.length > LANGUAGES_NAMED ? ', …' : ''}`;
}

/**
 * Records that may go, as the preview shows them (the first TEMPLATES_SHOWN, a cut one said so,
 * the others named by language) and whole, for the yes to bind: a change to any of them, past a
 * cut or in one not shown, undoes the yes.
 */
function templatesShown(items: Array<Record<string, unknown>>): { text: string; bound: string } {
  const records = items.map((item) => {
    const whole = recordText(item, Number.POSITIVE_INFINITY);
    const cut = `cut after ${TEMPLATE_CHARS.toLocaleString('en-US')} of its ${whole.length.toLocaleString('en-US')} characters: channel.whatsapp.templates shows it whole`;
    return { whole, text: whole.length <= TEMPLATE_CHARS ? whole : `${recordText(item, TEMPLATE_CHARS)} (${cut})` };
  });
  const rest = items.slice(TEMPLATES_SHOWN);
  const more = rest.length > 0 ? ` (and ${rest.length.toLocaleString('en-US')} more of that name${otherLanguages(rest)}, not shown here)` : '';
  const text = `${records
    .slice(0, TEMPLATES_SHOWN)
    .map((record) => record.text)
    .join(' | ')}${more}`;
  return { text, bound: records.map((record) => record.whole).join(' | ') };
}

/**
 * The approved template a send names, as the template list shows it (its layout is not in the
 * spec, so in words, whatever its fields): a person agrees to the text the customer gets, not to a
 * name. One the list does not hold is said so before anyone agrees to it.
 */
async function templateFact(params: Params, read: PreviewReader): Promise<Fact | undefined> {
  const template = params.template as { name?: unknown; language?: unknown } | undefined;
  if (template === undefined) return undefined;
  const listed = await read(TEMPLATES);
  if (listed === undefined) return notShown(`Template ${quote(template.name)}`, undefined);
  // Read, but not as a list (the spec does not show its layout): said so, and the yes bound to what was read.
  if (!Array.isArray(listed)) {
    const text = `Template ${quote(template.name)}: the API's template list came in a layout this server does not read (not a list), so it is not shown here. Check it (channel.whatsapp.templates) before agreeing.`;
    return { text, bound: `${text} ${brief(listed, Number.POSITIVE_INFINITY)}` };
  }
  const named = listed.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null && item.name === template.name);
  if (named.length === 0)
    return `Template ${quote(template.name)}: not among the approved templates the API lists now (channel.whatsapp.templates): check the name before asking the user.`;
  // A list whose records carry no `language` field (its layout is not in the spec) cannot say a language is missing.
  const byLanguage = template.language !== undefined && named.some((item) => Object.hasOwn(item, 'language'));
  const inLanguage = byLanguage ? named.filter((item) => item.language === template.language) : named;
  const line = (shown: string) =>
    inLanguage.length === 0
      ? `Template ${quote(template.name)}: the API lists it, but none in language ${quote(template.language)}, only: ${shown}. Check the language before asking the user.`
      : `Template as the API lists it: ${shown}`;
  const { text, bound } = templatesShown(inLanguage.length === 0 ? named : inLanguage);
  return { text: line(text), bound: line(bound) };
}

export const channel = defineDomain('channel', 'Channels', [
  {
    id: 'channel.list',
    method: 'GET',
    path: '/api/channel/v1/channels',
    scope: 'channel.read',
    risk: 'safe',
    summary: 'Channels: channelId, type, name, status, connectedAt.',
    params: z.strictObject({}),
    list: { idField: 'channelId' },
  },
  {
    id: 'channel.get',
    method: 'GET',
    path: '/api/channel/v1/channels/{channelId}',
    scope: 'channel.read',
    risk: 'safe',
    summary: 'One channel.',
    params: z.strictObject({ channelId: pathId('channelId (channel.list)') }),
    list: { idField: 'channelId' },
    findIdsWith: 'channel.list',
  },
  {
    id: 'channel.whatsapp.status',
    method: 'GET',
    path: '/api/channel/v1/whatsapp/status',
    scope: 'channel.read',
    risk: 'safe',
    summary: 'WhatsApp connection status.',
    params: z.strictObject({}),
  },
  {
    // operationId not in the spec; named by the design brief.
    id: 'channel.whatsapp.templates',
    method: 'GET',
    path: '/api/channel/v1/whatsapp/cloud/templates',
    scope: 'channel.read',
    risk: 'safe',
    summary: 'Approved WhatsApp Cloud templates.',
    params: z.strictObject({}),
    customerText: true,
  },
  {
    // The spec does not show this body: msisdn plus either a text message or a template;
    // further fields pass through unchanged so the real API's fields can still be sent, and the
    // confirmation lists every one of them (see shared/src/assumptions.md).
    id: 'channel.whatsapp.send',
    method: 'POST',
    path: '/api/channel/v1/notification/send/whatsapp',
    scope: 'inbox.reply',
    risk: 'destructive',
    summary: 'Send one WhatsApp message (text or template) to one number.',
    params: z
      .looseObject({
        msisdn: msisdn('recipient number'),
        message: requiredText('text', 4096).optional(),
        template: z
          .looseObject({
            name: requiredText('template name', 200),
            language: z.string().max(20).optional().describe('e.g. id'),
            parameters: z.array(z.string().max(1024)).max(50).optional().describe('values in order'),
          })
          .optional()
          .describe('{name, language?, parameters?} of an approved template'),
      })
      .refine((p) => p.message !== undefined || p.template !== undefined, { message: 'needs a message or a template' })
      // One WhatsApp message is free text or a template: with both, a person would agree to a template that may never go.
      .refine((p) => p.message === undefined || p.template === undefined, {
        message: 'takes a message or a template, not both (one WhatsApp message is either): send each in its own call, each confirmed',
      }),
    // A send opens no ticket: the one trace of it a read may show is the message quota. The spec
    // says campaign.send uses quota, not that this send does: an unchanged quota proves nothing,
    // and a model told it does would send the message a second time.
    verifyWith:
      'billing.quota (billing server; the message quota may show the send, but the API does not say a single WhatsApp send uses it, so an unchanged quota does not mean it was not sent: ask the user before sending it again)',
    messages: async () => 1,
    confirmation: {
      // The whole outgoing text: the message and every template parameter, never cut.
      effect: (p) => {
        const template = p.template as { name?: string; language?: string; parameters?: string[] } | undefined;
        const parts: string[] = [];
        if (p.message !== undefined) parts.push(`the text ${quote(p.message)}`);
        if (template) {
          const language = template.language !== undefined ? ` in language ${quote(template.language)}` : '';
          const parameters = template.parameters?.length ? ` with the parameters ${template.parameters.map(quote).join(', ')}` : '';
          parts.push(`the template ${quote(template.name)}${language}${parameters}`);
        }
        return `Send one WhatsApp message to ${String(p.msisdn)} now: ${parts.join(' and ')}.`;
      },
      irreversible: 'a delivered message cannot be recalled.',
      facts: async (p, read) => [await templateFact(p, read)],
    },
  },
]);
