// The contact domain: customer contacts of the tenant.
import { z } from 'zod';
import {
  defineDomain,
  email,
  findRecord,
  msisdn,
  normalizeMsisdn,
  notShown,
  pathId,
  plain,
  quote,
  quoteName,
  requiredText,
  withNames,
  type Fact,
  type Params,
  type PreviewReader,
} from '@engage-mcp/shared';

const CONTACTS = '/api/user/users';

/** A contact's name for previews; the API has no single-contact read, so it is found in the list. */
async function contactName(params: Params, read: PreviewReader): Promise<Fact> {
  const contacts = await read(CONTACTS);
  const contact = findRecord(contacts, '_id', params.id);
  if (!contact) return notShown('Contact', contacts);
  return withNames((name) => `Contact: ${name(contact.name)} (${contact.msisdn === undefined ? 'no number' : plain(contact.msisdn)}).`);
}

/** How many numbers of an import a preview names in one line; the count says how many more. */
const NAMED_IN_LINE = 5;
/** How many names a preview gives one number (rows of the import, or contacts listed): the count says how many more. */
const NAMES_PER_NUMBER = 3;

/** Names and numbers, at most NAMED_IN_LINE of them, with how many more. */
function someOf(items: string[]): string {
  const more = items.length - NAMED_IN_LINE;
  return `${items.slice(0, NAMED_IN_LINE).join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/**
 * A number with the first NAMES_PER_NUMBER of its names and how many more `what`: a number thousands
 * of rows or contacts share (a shop's switchboard) would otherwise make the statement too long to show.
 */
function numberWithNames(number: string, names: unknown[], name: (value: unknown) => string, what: string): string {
  const more = names.length - NAMES_PER_NUMBER;
  return `${number}: ${names.slice(0, NAMES_PER_NUMBER).map(name).join(', ')}${more > 0 ? ` and ${more.toLocaleString('en-US')} more ${what}` : ''}`;
}

/**
 * Contacts of an import that give one number twice or more, as validation wrote the numbers
 * (0812-… and 62812… are one number): the person counts on each row arriving as a contact.
 */
function repeatedNumbers(users: Array<{ name: string; msisdn: string }>): string | undefined {
  const byNumber = new Map<string, string[]>();
  for (const user of users) {
    const names = byNumber.get(user.msisdn);
    if (names) names.push(user.name);
    else byNumber.set(user.msisdn, [user.name]);
  }
  const repeated = [...byNumber].filter(([, names]) => names.length > 1).map(([number, names]) => numberWithNames(number, names, quote, 'rows'));
  if (repeated.length === 0) return undefined;
  return `Numbers given twice or more in this import: ${repeated.length} (${someOf(repeated)}). The API does not say which of them it keeps.`;
}

/**
 * A listed contact's number as validation writes an import's: the spec gives no type or form for
 * it, and a contact listed as 6281… (a JSON number), +62 813-… or 0813-… has the number all the same.
 */
function listedNumber(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return normalizeMsisdn(String(value));
  return typeof value === 'string' ? normalizeMsisdn(value) : undefined;
}

/**
 * The names of the listed contacts with each of `numbers`, sorted: the list's order is not the
 * spec's to give, and a yes bound to whichever came last would fail whenever the order changed.
 */
function holders(contacts: unknown[], numbers: Set<string>): Map<string, unknown[]> {
  const held = new Map<string, Array<{ name: unknown; order: string }>>();
  for (const contact of contacts) {
    const record = typeof contact === 'object' && contact !== null ? (contact as Record<string, unknown>) : undefined;
    const number = listedNumber(record?.msisdn);
    if (number === undefined || !numbers.has(number)) continue;
    const entry = { name: record?.name, order: quote(record?.name) };
    const names = held.get(number);
    if (names) names.push(entry);
    else held.set(number, [entry]);
  }
  const byOrder = (a: { order: string }, b: { order: string }) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0);
  return new Map([...held].map(([number, names]) => [number, names.sort(byOrder).map((entry) => entry.name)]));
}

/**
 * Contacts of an import whose number a contact of the tenant has already, as the contact list
 * reads now. The yes is bound to those numbers and names, not to the list's length, which others change.
 */
async function numbersHeld(users: Array<{ msisdn: string }>, read: PreviewReader): Promise<Fact> {
  const contacts = await read(CONTACTS);
  const what = 'Numbers a contact already has';
  if (contacts === undefined) return notShown(what, undefined);
  if (!Array.isArray(contacts)) return `${what}: the contact list did not read as a list, so they are not shown. Check them before agreeing.`;
  const given = new Set(users.map((user) => user.msisdn));
  const held = holders(contacts, given);
  const numbers = [...given].filter((number) => held.has(number));
  const line = (name: (value: unknown) => string, among: string) =>
    numbers.length === 0
      ? `${what}${among}: none.`
      : `${what}${among}: ${numbers.length} (${someOf(numbers.map((number) => numberWithNames(number, held.get(number) ?? [], name, 'contacts')))}). The API does not say whether it skips, refuses or adds them again.`;
  return { text: line(quoteName, ` (of the ${contacts.length} contacts the API lists now)`), bound: line(quote, '') };
}

const contactFields = {
  name: requiredText('full name', 200),
  msisdn: msisdn(),
  email: email().optional(),
};

export const contact = defineDomain('contact', 'Contacts', [
  {
    id: 'contact.list',
    method: 'GET',
    path: CONTACTS,
    scope: 'contact.read',
    risk: 'safe',
    summary: 'Contacts: _id, name, msisdn, email, tags, createdAt.',
    params: z.strictObject({}),
    list: { idField: '_id' },
    customerText: true,
  },
  {
    id: 'contact.byCampaign',
    method: 'GET',
    path: `${CONTACTS}/campaign/{campaignID}`,
    scope: 'contact.read',
    risk: 'safe',
    summary: "A campaign's recipients.",
    params: z.strictObject({ campaignID: pathId('campaign id (campaign.list)') }),
    list: { idField: '_id' },
    customerText: true,
    findIdsWith: 'campaign.list (campaign server)',
  },
  {
    id: 'contact.create',
    method: 'POST',
    path: CONTACTS,
    scope: 'contact.manage',
    risk: 'confirm',
    summary: 'Add a contact.',
    params: z.strictObject(contactFields),
    customerText: true,
    verifyWith: 'contact.list',
    confirmation: { effect: (p) => `Add the contact ${quote(p.name)} (${String(p.msisdn)}${p.email ? `, ${String(p.email)}` : ''}).` },
  },
  {
    id: 'contact.update',
    method: 'PUT',
    path: `${CONTACTS}/{id}`,
    scope: 'contact.manage',
    risk: 'confirm',
    summary: 'Change the given fields of a contact.',
    params: z
      .strictObject({
        id: pathId('contact _id'),
        name: contactFields.name.optional(),
        msisdn: msisdn().optional(),
        email: email().optional(),
      })
      .refine((p) => p.name !== undefined || p.msisdn !== undefined || p.email !== undefined, {
        message: 'needs at least one of name, msisdn, email to change',
      }),
    customerText: true,
    findIdsWith: 'contact.list',
    verifyWith: 'contact.list',
    confirmation: {
      effect: (p) =>
        `Change contact ${String(p.id)}: ${['name', 'msisdn', 'email']
          .filter((key) => p[key] !== undefined)
          .map((key) => `${key} → ${quote(p[key])}`)
          .join(', ')}.`,
      facts: async (p, read) => [await contactName(p, read)],
    },
  },
  {
    id: 'contact.delete',
    method: 'DELETE',
    path: `${CONTACTS}/{id}`,
    scope: 'contact.delete',
    risk: 'destructive',
    summary: 'Delete a contact for good (its conversations stay).',
    params: z.strictObject({ id: pathId('contact _id') }),
    // The answer is untyped (spec): it may be the deleted contact, named by the customer.
    customerText: true,
    findIdsWith: 'contact.list',
    verifyWith: 'contact.list',
    confirmation: {
      effect: (p) => `Delete contact ${String(p.id)} permanently.`,
      irreversible: 'the contact is gone for good; its conversation history remains in the inbox.',
      facts: async (p, read) => [await contactName(p, read)],
    },
  },
  {
    id: 'contact.import',
    method: 'POST',
    path: `${CONTACTS}/import`,
    scope: 'contact.manage',
    risk: 'confirm',
    summary: 'Import many contacts at once.',
    params: z.strictObject({
      users: z
        .array(z.strictObject({ name: contactFields.name, msisdn: msisdn(), email: email().optional() }))
        .min(1, 'needs at least one contact')
        .max(10_000, 'at most 10,000 contacts per import: split the list into imports of 10,000 or fewer, each confirmed')
        .describe('[{name, msisdn (62…), email?}]'),
    }),
    customerText: true,
    verifyWith: 'contact.list',
    confirmation: {
      effect: (p) => {
        const users = p.users as Array<{ name: string }>;
        const sample = users
          .slice(0, 3)
          .map((user) => quote(user.name))
          .join(', ');
        return `Import ${users.length} contact(s): ${sample}${users.length > 3 ? ', …' : ''}.`;
      },
      facts: async (p, read) => {
        const users = p.users as Array<{ name: string; msisdn: string }>;
        return [repeatedNumbers(users), await numbersHeld(users, read)];
      },
    },
  },
]);
