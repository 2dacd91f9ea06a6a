// The inbox domain: conversation tickets with customers.
import { z } from 'zod';
import {
  defineDomain,
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

const TICKETS = '/api/ai/v1/tickets';

/** Who a ticket is with, from the typed ticket list (the single-ticket layout is not in the spec). */
async function ticketParty(params: Params, read: PreviewReader): Promise<Fact> {
  const tickets = await read(TICKETS);
  const ticket = findRecord(tickets, 'ticketID', params.ticketID);
  if (!ticket) return notShown('Ticket', tickets);
  return withNames(
    (name) =>
      `Ticket ${plain(ticket.ticketID)}: ${name(ticket.customerName)} (${ticket.msisdn === undefined ? 'no number' : plain(ticket.msisdn)}) on ${plain(ticket.channel)}, status ${plain(ticket.status)}.`,
  );
}

const ticketID = pathId('ticketID (inbox.ticket.list)');

/**
 * A ticket status as inbox.ticket.list spells it (the spec gives none). A status with a space in it
 * ("on hold") is sent, encoded, where an id's rules refused it: the model is told to copy the list's
 * spelling. Separators, % and invisible characters are refused, as in any path parameter.
 */
const ticketStatus = z
  .string({ error: 'expected a string: a status as inbox.ticket.list spells it' })
  .min(1, 'must not be empty')
  .max(64, 'is longer than any status (64 characters at most)')
  .regex(/^[^/\\?#%\p{Cc}\p{Cf}]+$/u, 'must be a status as inbox.ticket.list spells it: no slashes, ?, #, % or control characters')
  .refine(
    (value) => value.trim() === value && value !== '.' && value !== '..',
    'must be a status as inbox.ticket.list spells it, with no space before or after',
  )
  .describe('ticket status (inbox.ticket.list)');

export const inbox = defineDomain('inbox', 'Inbox', [
  {
    id: 'inbox.ticket.list',
    method: 'GET',
    path: TICKETS,
    scope: 'inbox.read',
    risk: 'safe',
    summary: 'Tickets: ticketID, status, channel, customerName, msisdn, lastMessageAt, unread.',
    params: z.strictObject({}),
    list: { idField: 'ticketID' },
    customerText: true,
  },
  {
    id: 'inbox.ticket.stats',
    method: 'GET',
    path: `${TICKETS}/stats`,
    scope: 'inbox.read',
    risk: 'safe',
    summary: 'Ticket counts per channel and status.',
    params: z.strictObject({}),
  },
  {
    id: 'inbox.ticket.get',
    method: 'GET',
    path: `${TICKETS}/{ticketID}`,
    scope: 'inbox.read',
    risk: 'safe',
    summary: 'One ticket with its messages.',
    params: z.strictObject({ ticketID }),
    customerText: true,
    findIdsWith: 'inbox.ticket.list',
  },
  {
    id: 'inbox.ticket.byStatus',
    method: 'GET',
    path: `${TICKETS}/status/{status}`,
    scope: 'inbox.read',
    risk: 'safe',
    // The spec does not give the statuses: the model takes them from the list, not from a guess here
    // (one the API spells otherwise may come back as an empty list, read as "none").
    summary: 'Tickets of one status, spelt as in inbox.ticket.list.',
    params: z.strictObject({ status: ticketStatus }),
    list: { idField: 'ticketID' },
    customerText: true,
  },
  {
    id: 'inbox.ticket.create',
    method: 'POST',
    path: TICKETS,
    scope: 'inbox.manage',
    risk: 'confirm',
    summary: 'Open a ticket; message? is sent to the customer.',
    params: z.strictObject({
      msisdn: msisdn('customer number'),
      channel: requiredText('channel, e.g. whatsapp', 40),
      message: requiredText('first message', 4096).optional(),
    }),
    customerText: true,
    verifyWith: 'inbox.ticket.list',
    // A first message is written on the ticket by the agent side, as a reply is: one message to the customer.
    messages: async () => 1,
    sendsMessage: (p) => p.message !== undefined,
    messageScope: 'inbox.reply',
    confirmation: {
      // The first message is delivered as a reply is: said so, lest a person take it for a note on the ticket.
      effect: (p) =>
        `Open a ticket with ${String(p.msisdn)} on ${plain(p.channel)}${p.message !== undefined ? ` and send the customer this message at once: ${quote(p.message)}` : ' (no message is sent to the customer)'}.`,
    },
  },
  {
    id: 'inbox.ticket.reply',
    method: 'POST',
    path: `${TICKETS}/{ticketID}/reply`,
    scope: 'inbox.reply',
    risk: 'destructive',
    summary: 'Reply to the customer (delivered at once).',
    params: z.strictObject({ ticketID, message: requiredText('reply text', 4096) }),
    // The answer is untyped (spec): it may be the ticket, with the customer's messages.
    customerText: true,
    findIdsWith: 'inbox.ticket.list',
    verifyWith: 'inbox.ticket.get',
    messages: async () => 1,
    confirmation: {
      effect: (p) => `Send this reply on ticket ${String(p.ticketID)}, delivered to the customer at once:\n${quote(p.message)}`,
      irreversible: 'a delivered reply cannot be withdrawn.',
      facts: async (p, read) => [await ticketParty(p, read)],
    },
  },
  {
    id: 'inbox.ticket.close',
    method: 'POST',
    path: `${TICKETS}/{ticketID}/close`,
    scope: 'inbox.manage',
    risk: 'confirm',
    summary: 'Close a ticket.',
    params: z.strictObject({ ticketID }),
    customerText: true,
    findIdsWith: 'inbox.ticket.list',
    verifyWith: 'inbox.ticket.get',
    confirmation: {
      effect: (p) => `Close ticket ${String(p.ticketID)}.`,
      facts: async (p, read) => [await ticketParty(p, read)],
    },
  },
]);
