// The contact domain: customer contacts of the tenant.
import { z } from 'zod';
import {
  defineDomain,
  email,
  findRecord,
  msisdn,
  notShown,
  pathId,
  plain,
  quote,
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
    },
  },
]);
