// The inbox: tickets (conversations with a customer) listed, counted, read, opened, replied to and
// closed. A closed ticket takes no replies.
import { objectId, type Ticket } from '../data.js';
import { bad, conflict } from '../failure.js';
import { checkChannel, checkMsisdn, str } from './input.js';
import { find, now, route, type HandlerContext } from './route.js';

const TICKET_STATUSES = ['open', 'pending', 'closed'];

/** A ticket as lists show it: without its messages. */
function listTicket(ticket: Ticket) {
  const { messages: _messages, ...rest } = ticket;
  return rest;
}

function stats({ tenant }: HandlerContext) {
  const count = (key: 'channel' | 'status') => {
    const counts: Record<string, number> = {};
    for (const ticket of tenant.tickets) counts[ticket[key]] = (counts[ticket[key]] ?? 0) + 1;
    return counts;
  };
  return { total: tenant.tickets.length, byChannel: count('channel'), byStatus: count('status') };
}

function byStatus({ tenant, params }: HandlerContext) {
  if (!TICKET_STATUSES.includes(params.status as string)) throw bad(`status must be one of ${TICKET_STATUSES.join(', ')}`);
  return tenant.tickets.filter((ticket) => ticket.status === params.status).map(({ messages: _m, msisdn: _n, unread: _u, ...rest }) => rest);
}

/** An open ticket with the customer at `msisdn` (named after their contact, if any), and our first message if given. */
function createTicket({ tenant, body }: HandlerContext) {
  const msisdn = str(body, 'msisdn', true, 20)!;
  checkMsisdn(msisdn);
  const channel = str(body, 'channel', true, 40)!;
  checkChannel(channel);
  const message = str(body, 'message', false);
  const contact = tenant.contacts.find((candidate) => candidate.msisdn === msisdn);
  const ticket: Ticket = {
    _id: objectId(Math.random),
    ticketID: `TCK-${9000 + tenant.tickets.length}`,
    status: 'open',
    channel,
    customerName: contact?.name ?? msisdn,
    msisdn,
    lastMessageAt: now(),
    unread: 0,
    messages: message ? [{ from: 'agent', text: message, at: now() }] : [],
  };
  tenant.tickets.push(ticket);
  return listTicket(ticket);
}

function reply({ tenant, params, body }: HandlerContext) {
  const ticket = find(tenant.tickets, 'ticketID', params.ticketID as string, 'ticket');
  const text = str(body, 'message', true)!;
  if (ticket.status === 'closed') throw conflict('ticket is closed');
  const message = { from: 'agent' as const, text, at: now() };
  ticket.messages.push(message);
  ticket.lastMessageAt = message.at;
  ticket.unread = 0;
  return { ticketID: ticket.ticketID, delivered: true, message };
}

function closeTicket({ tenant, params }: HandlerContext) {
  const ticket = find(tenant.tickets, 'ticketID', params.ticketID as string, 'ticket');
  if (ticket.status === 'closed') throw conflict('ticket is already closed');
  ticket.status = 'closed';
  ticket.unread = 0;
  return { ticketID: ticket.ticketID, status: ticket.status };
}

export const inboxRoutes = [
  route('inbox.ticket.list', 'GET', '/api/ai/v1/tickets', 'inbox.read', ({ tenant }) => tenant.tickets.map(listTicket)),
  route('inbox.ticket.stats', 'GET', '/api/ai/v1/tickets/stats', 'inbox.read', stats),
  route('inbox.ticket.get', 'GET', '/api/ai/v1/tickets/{ticketID}', 'inbox.read', ({ tenant, params }) =>
    find(tenant.tickets, 'ticketID', params.ticketID as string, 'ticket'),
  ),
  route('inbox.ticket.byStatus', 'GET', '/api/ai/v1/tickets/status/{status}', 'inbox.read', byStatus),
  route('inbox.ticket.create', 'POST', '/api/ai/v1/tickets', 'inbox.manage', createTicket),
  route('inbox.ticket.reply', 'POST', '/api/ai/v1/tickets/{ticketID}/reply', 'inbox.reply', reply),
  route('inbox.ticket.close', 'POST', '/api/ai/v1/tickets/{ticketID}/close', 'inbox.manage', closeTicket),
];
