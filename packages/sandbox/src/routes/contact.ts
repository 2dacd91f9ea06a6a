// Contacts: list, by campaign, create, update, delete, bulk import. A contact's msisdn is unique
// within its tenant.
import { objectId, type Contact, type TenantState } from '../data.js';
import { bad, conflict } from '../failure.js';
import { checkEmail, checkMsisdn, str } from './input.js';
import { find, now, route, type HandlerContext } from './route.js';

type ContactInput = { name: string | undefined; msisdn: string | undefined; email: string | undefined };

function contactInput(body: Record<string, unknown>, required: boolean): ContactInput {
  const name = str(body, 'name', required, 200);
  const msisdn = str(body, 'msisdn', required, 20);
  const email = str(body, 'email', false, 254);
  checkMsisdn(msisdn);
  checkEmail(email);
  return { name, msisdn, email };
}

function newContact(input: ContactInput): Contact {
  return {
    _id: objectId(Math.random),
    name: input.name!,
    msisdn: input.msisdn!,
    ...(input.email ? { email: input.email } : {}),
    tags: [],
    createdAt: now(),
  };
}

/** The campaign's recipients that still exist, with only the fields a recipient list shows. */
function byCampaign({ tenant, params }: HandlerContext) {
  const campaign = find(tenant.campaigns, '_id', params.campaignID as string, 'campaign');
  return campaign.recipientIds
    .map((id) => tenant.contacts.find((contact) => contact._id === id))
    .filter((contact): contact is Contact => contact !== undefined)
    .map(({ _id, name, msisdn, email }) => ({ _id, name, msisdn, ...(email ? { email } : {}) }));
}

/** A 409 when another contact than `self` has this number: a tenant's numbers are unique, on create and on update alike. */
function checkNumberFree(tenant: TenantState, msisdn: string | undefined, self?: Contact): void {
  if (tenant.contacts.some((contact) => contact !== self && contact.msisdn === msisdn)) throw conflict('a contact with this msisdn exists');
}

function createContact({ tenant, body }: HandlerContext) {
  const input = contactInput(body, true);
  checkNumberFree(tenant, input.msisdn);
  const contact = newContact(input);
  tenant.contacts.push(contact);
  return contact;
}

function updateContact({ tenant, params, body }: HandlerContext) {
  const contact = find(tenant.contacts, '_id', params.id as string, 'contact');
  const input = contactInput(body, false);
  if (input.name === undefined && input.msisdn === undefined && input.email === undefined) throw bad('nothing to update');
  if (input.msisdn !== undefined) checkNumberFree(tenant, input.msisdn, contact);
  Object.assign(contact, Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)));
  return contact;
}

function deleteContact({ tenant, params }: HandlerContext) {
  const contact = find(tenant.contacts, '_id', params.id as string, 'contact');
  tenant.contacts.splice(tenant.contacts.indexOf(contact), 1);
  return { deleted: contact._id }; // its tickets (conversation history) stay
}

/** All users are checked before any is added; one whose msisdn exists already is skipped, not an error. */
function importContacts({ tenant, body }: HandlerContext) {
  const users = body.users;
  if (!Array.isArray(users) || users.length === 0) throw bad('users must be a non-empty array');
  if (users.length > 10_000) throw bad('at most 10000 users per import');
  const inputs = users.map((user, index) => {
    if (typeof user !== 'object' || user === null) throw bad(`users[${index}] must be an object`);
    try {
      return contactInput(user as Record<string, unknown>, true);
    } catch (error) {
      throw bad(`users[${index}]: ${(error as Error).message}`);
    }
  });
  let created = 0;
  let skipped = 0;
  for (const input of inputs) {
    if (tenant.contacts.some((contact) => contact.msisdn === input.msisdn)) {
      skipped++;
      continue;
    }
    tenant.contacts.push(newContact(input));
    created++;
  }
  return { imported: created, skipped };
}

export const contactRoutes = [
  route('contact.list', 'GET', '/api/user/users', 'contact.read', ({ tenant }) => tenant.contacts),
  route('contact.byCampaign', 'GET', '/api/user/users/campaign/{campaignID}', 'contact.read', byCampaign),
  route('contact.create', 'POST', '/api/user/users', 'contact.manage', createContact),
  route('contact.update', 'PUT', '/api/user/users/{id}', 'contact.manage', updateContact),
  route('contact.delete', 'DELETE', '/api/user/users/{id}', 'contact.delete', deleteContact),
  route('contact.import', 'POST', '/api/user/users/import', 'contact.manage', importContacts),
];
