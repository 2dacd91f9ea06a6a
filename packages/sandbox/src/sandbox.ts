// The sandbox: a local implementation of the whole Tenant Messaging and Engagement API, on
// loopback only. Tenants, scoped and expiring keys, the envelope, RateLimit headers and 429s,
// campaign and ticket state, quota, 4xx for bad input, fault injection, and a record of what it
// carried out. It follows the spec, not our servers: it shares no code with them.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { objectId, seedTenant, type Campaign, type Contact, type TenantState, type Ticket } from './data.js';

export const ALL_SCOPES = [
  'contact.read',
  'contact.manage',
  'contact.delete',
  'campaign.read',
  'campaign.manage',
  'campaign.send',
  'campaign.control',
  'inbox.read',
  'inbox.manage',
  'inbox.reply',
  'channel.read',
  'product.read',
  'product.manage',
  'billing.read',
  'quota.read',
  'tenant.setting.read',
  'tenant.read',
];
export const READ_SCOPES = ALL_SCOPES.filter((scope) => scope.endsWith('.read'));

export interface SandboxOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Requests per minute per key (default 6000). The tenant's bucket holds three times that. */
  rateLimit?: number;
  /** More generated contacts for tenant A, for paging and size tests. */
  extraContacts?: number;
  /** More generated tickets for tenant A, for size tests. */
  extraTickets?: number;
  /** Time between a sending campaign's batches (default 400 ms; it completes in 4 batches). */
  sendStepMs?: number;
}

export type FaultKind =
  | 'delay' // wait delayMs, then answer normally
  | 'status' // answer `status` with an envelope; the work is done only with afterWork
  | 'html' // answer `status` (default 502) with an HTML page; the work is done only with afterWork
  | 'reset-before' // drop the connection before doing anything
  | 'reset-after' // do the work, then drop the connection without answering
  | 'truncated' // do the work, answer 200 with a cut-off JSON body
  | 'not-envelope' // do the work, answer 200 with JSON that is not the envelope
  | 'slow-body' // do the work, send headers, then trickle the body over delayMs
  | 'rate-limit' // answer 429 with Retry-After: retryAfter; nothing is done
  | 'redirect'; // answer 302 to another origin; nothing is done

export interface Fault {
  kind: FaultKind;
  /** Which requests: an operationId, and/or a method. Omitted: any API request. */
  operationId?: string;
  method?: string;
  /** How many matching requests it applies to (default 1). */
  times?: number;
  delayMs?: number;
  status?: number;
  retryAfter?: string;
  afterWork?: boolean;
  /** The envelope's message of a 'status' fault (default "injected failure"). */
  message?: string;
}

export interface CarriedOut {
  operationId: string;
  tenantId: string;
  /** Path parameters as the sandbox decoded them, plus the body. */
  params: Record<string, unknown>;
  at: number;
}

export interface SeenRequest {
  method: string;
  path: string;
  /** The route the sandbox matched, or null when none did. */
  operationId: string | null;
  status: number;
  keyLabel?: string;
}

export interface SandboxKeys {
  full: string;
  readOnly: string;
  expired: string;
  revoked: string;
  otherTenant: string;
  [label: string]: string;
}

export interface Sandbox {
  baseUrl: string;
  port: number;
  keys: SandboxKeys;
  /** Mints a key with the given scopes for tenant A (or B). */
  /** Mints a key with the given scopes; rateLimit per minute, burst the bucket's size (default: rateLimit). */
  createKey(scopes: readonly string[], options?: { tenant?: 'A' | 'B'; label?: string; expiresAt?: number; rateLimit?: number; burst?: number }): string;
  /** Revokes a key, as its holder would in the tenant console: it is refused with 401 from now on. */
  revokeKey(key: string): void;
  injectFault(fault: Fault): void;
  clearFaults(): void;
  /** Every mutating operation carried out, once, in order. */
  carriedOut(): CarriedOut[];
  requests(): SeenRequest[];
  clearLogs(): void;
  tenant(which: 'A' | 'B'): TenantState;
  close(): Promise<void>;
}

interface KeyRecord {
  label: string;
  tenant: TenantState;
  scopes: Set<string>;
  expiresAt: number;
  revoked: boolean;
  rateLimit: number;
  burst: number;
}

class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

const bad = (message: string) => new ApiFailure(400, 40001, message);
const notFound = (what: string) => new ApiFailure(404, 40401, `${what} not found`);
const conflict = (message: string) => new ApiFailure(409, 40901, message);

type Handler = (ctx: { tenant: TenantState; params: Record<string, string>; body: Record<string, unknown> }) => unknown;

interface Route {
  operationId: string;
  method: string;
  segments: string[];
  scope: string;
  mutating: boolean;
  handler: Handler;
}

/** Token bucket: `capacity` tokens (the burst), refilled at `perMinute`. */
class Bucket {
  private tokens: number;
  private updatedAt = Date.now();
  constructor(
    readonly perMinute: number,
    readonly capacity: number = perMinute,
  ) {
    this.tokens = capacity;
  }
  private refill(now: number) {
    // A request's time is read before its key's bucket is made: a bucket made a millisecond later
    // must not count that as time owed (it read 0.99998 tokens and refused a full bucket with 429).
    if (now <= this.updatedAt) return;
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.updatedAt) / 60_000) * this.perMinute);
    this.updatedAt = now;
  }
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
  remaining(now: number): number {
    this.refill(now);
    return Math.floor(this.tokens);
  }
  secondsUntilToken(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 60) / this.perMinute);
  }
  secondsUntilFull(now: number): number {
    this.refill(now);
    return Math.ceil(((this.capacity - this.tokens) * 60) / this.perMinute);
  }
}

const MSISDN = /^62\d{7,13}$/;
const CHANNELS = ['whatsapp', 'telegram', 'email'];
const TICKET_STATUSES = ['open', 'pending', 'closed'];
const now = () => new Date().toISOString();

function str(body: Record<string, unknown>, field: string, required: boolean, max = 4096): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) {
    if (required) throw bad(`${field} is required`);
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') throw bad(`${field} must be a non-empty string`);
  if (value.length > max) throw bad(`${field} is too long`);
  return value;
}

function checkMsisdn(value: string | undefined): void {
  if (value !== undefined && !MSISDN.test(value)) throw bad('msisdn must be 62 followed by digits (62xxxxxxxxxx)');
}

function checkEmail(value: string | undefined): void {
  if (value !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) throw bad('email is not a valid address');
}

/** `application/json`, in any letter case, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function publicCampaign(campaign: Campaign) {
  const { recipientIds: _recipients, message: _message, failedCount: _failed, openedCount: _opened, ...rest } = campaign;
  return rest;
}

function listTicket(ticket: Ticket) {
  const { messages: _messages, ...rest } = ticket;
  return rest;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const tenants = { A: seedTenant('A', options.extraContacts ?? 0, options.extraTickets ?? 0), B: seedTenant('B') };
  const rateLimit = options.rateLimit ?? 6000;
  const sendStepMs = options.sendStepMs ?? 400;
  const keys = new Map<string, KeyRecord>();
  const keyBuckets = new Map<string, Bucket>();
  const tenantBuckets = new Map<string, Bucket>();
  const faults: Array<Fault & { left: number }> = [];
  let carried: CarriedOut[] = [];
  let seen: SeenRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const createKey: Sandbox['createKey'] = (scopes, keyOptions = {}) => {
    const key = `eng_live_${randomBytes(20).toString('hex')}`;
    keys.set(key, {
      label: keyOptions.label ?? `custom-${keys.size}`,
      tenant: tenants[keyOptions.tenant ?? 'A'],
      scopes: new Set(scopes),
      expiresAt: keyOptions.expiresAt ?? Number.POSITIVE_INFINITY,
      revoked: false,
      rateLimit: keyOptions.rateLimit ?? rateLimit,
      burst: keyOptions.burst ?? keyOptions.rateLimit ?? rateLimit,
    });
    return key;
  };
  const sandboxKeys: SandboxKeys = {
    full: createKey(ALL_SCOPES, { label: 'full' }),
    readOnly: createKey(READ_SCOPES, { label: 'readOnly' }),
    expired: createKey(ALL_SCOPES, { label: 'expired', expiresAt: Date.now() - 86_400_000 }),
    revoked: createKey(ALL_SCOPES, { label: 'revoked' }),
    otherTenant: createKey(ALL_SCOPES, { label: 'otherTenant', tenant: 'B' }),
  };
  (keys.get(sandboxKeys.revoked) as KeyRecord).revoked = true;

  // ---- campaign sending: draft → sending → completed, in batches, deducting quota ----
  function startSending(tenant: TenantState, campaign: Campaign) {
    campaign.status = 'sending';
    campaign.sentAt = now();
    const batch = Math.max(1, Math.ceil(campaign.totalRecipients / 4));
    const step = () => {
      if (campaign.status !== 'sending') return;
      const count = Math.min(batch, campaign.totalRecipients - campaign.sentCount);
      campaign.sentCount += count;
      tenant.messageQuota.used += count;
      if (campaign.sentCount >= campaign.totalRecipients) {
        campaign.status = 'completed';
        campaign.finishedAt = now();
        campaign.openedCount = Math.floor(campaign.sentCount * 0.5);
        return;
      }
      schedule(step);
    };
    schedule(step);
  }
  function schedule(fn: () => void) {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, sendStepMs);
    timer.unref();
    timers.add(timer);
  }

  const find = <T>(items: T[], field: keyof T, value: string, what: string): T => {
    const item = items.find((candidate) => candidate[field] === value);
    if (!item) throw notFound(what);
    return item;
  };
  const quotaLeft = (tenant: TenantState) => tenant.messageQuota.total - tenant.messageQuota.used;

  const routes: Route[] = [];
  const route = (operationId: string, method: string, path: string, scope: string, handler: Handler) =>
    routes.push({ operationId, method, segments: path.split('/'), scope, mutating: method !== 'GET', handler });

  // ---- contact ----
  route('contact.list', 'GET', '/api/user/users', 'contact.read', ({ tenant }) => tenant.contacts);
  route('contact.byCampaign', 'GET', '/api/user/users/campaign/{campaignID}', 'contact.read', ({ tenant, params }) => {
    const campaign = find(tenant.campaigns, '_id', params.campaignID as string, 'campaign');
    return campaign.recipientIds
      .map((id) => tenant.contacts.find((contact) => contact._id === id))
      .filter((contact): contact is Contact => contact !== undefined)
      .map(({ _id, name, msisdn, email }) => ({ _id, name, msisdn, ...(email ? { email } : {}) }));
  });
  const contactInput = (body: Record<string, unknown>, required: boolean) => {
    const name = str(body, 'name', required, 200);
    const msisdn = str(body, 'msisdn', required, 20);
    const email = str(body, 'email', false, 254);
    checkMsisdn(msisdn);
    checkEmail(email);
    return { name, msisdn, email };
  };
  route('contact.create', 'POST', '/api/user/users', 'contact.manage', ({ tenant, body }) => {
    const input = contactInput(body, true);
    if (tenant.contacts.some((contact) => contact.msisdn === input.msisdn)) throw conflict('a contact with this msisdn exists');
    const contact: Contact = {
      _id: objectId(Math.random),
      name: input.name!,
      msisdn: input.msisdn!,
      ...(input.email ? { email: input.email } : {}),
      tags: [],
      createdAt: now(),
    };
    tenant.contacts.push(contact);
    return contact;
  });
  route('contact.update', 'PUT', '/api/user/users/{id}', 'contact.manage', ({ tenant, params, body }) => {
    const contact = find(tenant.contacts, '_id', params.id as string, 'contact');
    const input = contactInput(body, false);
    if (input.name === undefined && input.msisdn === undefined && input.email === undefined) throw bad('nothing to update');
    Object.assign(contact, Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)));
    return contact;
  });
  route('contact.delete', 'DELETE', '/api/user/users/{id}', 'contact.delete', ({ tenant, params }) => {
    const contact = find(tenant.contacts, '_id', params.id as string, 'contact');
    tenant.contacts.splice(tenant.contacts.indexOf(contact), 1);
    return { deleted: contact._id }; // its tickets (conversation history) stay
  });
  route('contact.import', 'POST', '/api/user/users/import', 'contact.manage', ({ tenant, body }) => {
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
      tenant.contacts.push({
        _id: objectId(Math.random),
        name: input.name!,
        msisdn: input.msisdn!,
        ...(input.email ? { email: input.email } : {}),
        tags: [],
        createdAt: now(),
      });
      created++;
    }
    return { imported: created, skipped };
  });

  // ---- campaign ----
  route('campaign.list', 'GET', '/api/campaign/campaigns', 'campaign.read', ({ tenant }) => tenant.campaigns.map(publicCampaign));
  route('campaign.analytics', 'GET', '/api/campaign/campaigns/analytics', 'campaign.read', ({ tenant }) => ({
    campaigns: tenant.campaigns.length,
    sent: tenant.campaigns.reduce((sum, campaign) => sum + campaign.sentCount, 0),
    opened: tenant.campaigns.reduce((sum, campaign) => sum + campaign.openedCount, 0),
    failed: tenant.campaigns.reduce((sum, campaign) => sum + campaign.failedCount, 0),
  }));
  route('campaign.create', 'POST', '/api/campaign/campaigns', 'campaign.manage', ({ tenant, body }) => {
    const name = str(body, 'name', true, 200)!;
    const message = str(body, 'message', true)!;
    const channel = str(body, 'channel', true, 20)!;
    if (!CHANNELS.includes(channel)) throw bad('channel must be whatsapp, telegram or email');
    const recipients = tenant.contacts.filter((contact) => (channel === 'email' ? contact.email : true));
    const campaign: Campaign = {
      _id: objectId(Math.random),
      name,
      message,
      channel: channel as Campaign['channel'],
      status: 'draft',
      totalRecipients: recipients.length,
      sentCount: 0,
      failedCount: 0,
      openedCount: 0,
      recipientIds: recipients.map((contact) => contact._id),
      createdAt: now(),
    };
    tenant.campaigns.push(campaign);
    return publicCampaign(campaign);
  });
  route('campaign.send', 'POST', '/api/campaign/campaigns/{id}/send', 'campaign.send', ({ tenant, params }) => {
    const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
    if (campaign.status !== 'draft') throw conflict(`campaign is ${campaign.status}; only a draft can be sent, and only once`);
    if (campaign.totalRecipients === 0) throw conflict('campaign has no recipients');
    if (quotaLeft(tenant) < campaign.totalRecipients)
      throw new ApiFailure(402, 40201, `not enough message quota: ${campaign.totalRecipients} needed, ${quotaLeft(tenant)} left`);
    startSending(tenant, campaign);
    return { _id: campaign._id, status: campaign.status, totalRecipients: campaign.totalRecipients };
  });
  route('campaign.cancel', 'POST', '/api/campaign/campaigns/{id}/cancel', 'campaign.control', ({ tenant, params }) => {
    const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
    if (campaign.status !== 'sending') throw conflict(`campaign is ${campaign.status}; only a sending campaign can be cancelled`);
    campaign.status = 'cancelled';
    campaign.finishedAt = now();
    return { _id: campaign._id, status: campaign.status, sentCount: campaign.sentCount, notSent: campaign.totalRecipients - campaign.sentCount };
  });
  route('campaign.progress', 'GET', '/api/campaign/campaigns/{id}/progress', 'campaign.read', ({ tenant, params }) => {
    const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
    return {
      _id: campaign._id,
      status: campaign.status,
      totalRecipients: campaign.totalRecipients,
      sentCount: campaign.sentCount,
      failedCount: campaign.failedCount,
      percent: campaign.totalRecipients ? Math.round((campaign.sentCount / campaign.totalRecipients) * 100) : 0,
    };
  });
  route('campaign.delete', 'DELETE', '/api/campaign/campaigns/{id}', 'campaign.manage', ({ tenant, params }) => {
    const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
    if (campaign.status === 'sending') throw conflict('campaign is sending; cancel it first');
    tenant.campaigns.splice(tenant.campaigns.indexOf(campaign), 1); // its statistics go with it
    return { deleted: campaign._id };
  });

  // ---- inbox ----
  route('inbox.ticket.list', 'GET', '/api/ai/v1/tickets', 'inbox.read', ({ tenant }) => tenant.tickets.map(listTicket));
  route('inbox.ticket.stats', 'GET', '/api/ai/v1/tickets/stats', 'inbox.read', ({ tenant }) => {
    const count = (key: 'channel' | 'status') => {
      const counts: Record<string, number> = {};
      for (const ticket of tenant.tickets) counts[ticket[key]] = (counts[ticket[key]] ?? 0) + 1;
      return counts;
    };
    return { total: tenant.tickets.length, byChannel: count('channel'), byStatus: count('status') };
  });
  route('inbox.ticket.get', 'GET', '/api/ai/v1/tickets/{ticketID}', 'inbox.read', ({ tenant, params }) =>
    find(tenant.tickets, 'ticketID', params.ticketID as string, 'ticket'),
  );
  route('inbox.ticket.byStatus', 'GET', '/api/ai/v1/tickets/status/{status}', 'inbox.read', ({ tenant, params }) => {
    if (!TICKET_STATUSES.includes(params.status as string)) throw bad(`status must be one of ${TICKET_STATUSES.join(', ')}`);
    return tenant.tickets.filter((ticket) => ticket.status === params.status).map(({ messages: _m, msisdn: _n, unread: _u, ...rest }) => rest);
  });
  route('inbox.ticket.create', 'POST', '/api/ai/v1/tickets', 'inbox.manage', ({ tenant, body }) => {
    const msisdn = str(body, 'msisdn', true, 20)!;
    checkMsisdn(msisdn);
    const channel = str(body, 'channel', true, 40)!;
    if (!CHANNELS.includes(channel)) throw bad('channel must be whatsapp, telegram or email');
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
  });
  route('inbox.ticket.reply', 'POST', '/api/ai/v1/tickets/{ticketID}/reply', 'inbox.reply', ({ tenant, params, body }) => {
    const ticket = find(tenant.tickets, 'ticketID', params.ticketID as string, 'ticket');
    const text = str(body, 'message', true)!;
    if (ticket.status === 'closed') throw conflict('ticket is closed');
    const message = { from: 'agent' as const, text, at: now() };
    ticket.messages.push(message);
    ticket.lastMessageAt = message.at;
    ticket.unread = 0;
    return { ticketID: ticket.ticketID, delivered: true, message };
  });
  route('inbox.ticket.close', 'POST', '/api/ai/v1/tickets/{ticketID}/close', 'inbox.manage', ({ tenant, params }) => {
    const ticket = find(tenant.tickets, 'ticketID', params.ticketID as string, 'ticket');
    if (ticket.status === 'closed') throw conflict('ticket is already closed');
    ticket.status = 'closed';
    ticket.unread = 0;
    return { ticketID: ticket.ticketID, status: ticket.status };
  });

  // ---- channel ----
  route('channel.list', 'GET', '/api/channel/v1/channels', 'channel.read', ({ tenant }) => tenant.channels);
  route('channel.get', 'GET', '/api/channel/v1/channels/{channelId}', 'channel.read', ({ tenant, params }) => [
    find(tenant.channels, 'channelId', params.channelId as string, 'channel'),
  ]);
  route('channel.whatsapp.status', 'GET', '/api/channel/v1/whatsapp/status', 'channel.read', ({ tenant }) => {
    const whatsapp = tenant.channels.find((item) => item.type === 'whatsapp');
    return { connected: whatsapp?.status === 'connected', phone: tenant.setting.phone, qualityRating: 'GREEN', checkedAt: now() };
  });
  route('channel.whatsapp.templates', 'GET', '/api/channel/v1/whatsapp/cloud/templates', 'channel.read', ({ tenant }) => tenant.templates);
  route('channel.whatsapp.send', 'POST', '/api/channel/v1/notification/send/whatsapp', 'inbox.reply', ({ tenant, body }) => {
    const msisdn = str(body, 'msisdn', true, 20)!;
    checkMsisdn(msisdn);
    const message = str(body, 'message', false);
    const template = body.template as { name?: unknown } | undefined;
    if (message === undefined && (typeof template !== 'object' || template === null || typeof template.name !== 'string'))
      throw bad('message or template.name is required');
    if (message === undefined && !tenant.templates.some((item) => item.name === template?.name)) throw bad('template is not an approved template');
    if (tenant.channels.find((item) => item.type === 'whatsapp')?.status !== 'connected') throw conflict('WhatsApp is not connected');
    if (quotaLeft(tenant) < 1) throw new ApiFailure(402, 40201, 'no message quota left');
    tenant.messageQuota.used += 1;
    return { messageId: `wamid.${randomBytes(8).toString('hex')}`, msisdn, status: 'sent' };
  });

  // ---- product ----
  const productInput = (body: Record<string, unknown>, required: boolean) => {
    const name = str(body, 'name', required, 200);
    if (body.price !== undefined && (typeof body.price !== 'number' || body.price < 0)) throw bad('price must be a non-negative number');
    if (body.stock !== undefined && (typeof body.stock !== 'number' || !Number.isInteger(body.stock) || body.stock < 0))
      throw bad('stock must be a whole number');
    if (body.description !== undefined && typeof body.description !== 'string') throw bad('description must be a string');
    return { ...body, ...(name !== undefined ? { name } : {}) };
  };
  route('product.list', 'GET', '/api/product/v1/products', 'product.read', ({ tenant }) => tenant.products);
  route('product.get', 'GET', '/api/product/v1/products/{productID}', 'product.read', ({ tenant, params }) =>
    find(tenant.products, '_id', params.productID as string, 'product'),
  );
  route('product.create', 'POST', '/api/product/v1/products', 'product.manage', ({ tenant, body }) => {
    const input = productInput(body, true);
    const product = {
      description: '',
      price: 0,
      currency: 'IDR',
      stock: 0,
      images: [] as string[],
      ...input,
      _id: objectId(Math.random),
      name: input.name as string,
      createdAt: now(),
    };
    tenant.products.push(product as TenantState['products'][number]);
    tenant.images.set(product._id, [...(Array.isArray(product.images) ? product.images : [])]);
    return product;
  });
  route('product.update', 'PUT', '/api/product/v1/products/{productID}', 'product.manage', ({ tenant, params, body }) => {
    const product = find(tenant.products, '_id', params.productID as string, 'product');
    const input = productInput(body, false);
    if (Object.keys(input).length === 0) throw bad('nothing to update');
    const { _id: _ignored, createdAt: _created, ...changes } = input as Record<string, unknown>;
    Object.assign(product, changes);
    return product;
  });
  route('product.delete', 'DELETE', '/api/product/v1/products/{productID}', 'product.manage', ({ tenant, params }) => {
    const product = find(tenant.products, '_id', params.productID as string, 'product');
    tenant.products.splice(tenant.products.indexOf(product), 1);
    const images = tenant.images.get(product._id) ?? [];
    tenant.images.delete(product._id);
    return { deleted: product._id, imagesDeleted: images.length };
  });

  // ---- billing and tenant ----
  route('billing.payment.list', 'GET', '/api/payment/v1/payment/history', 'billing.read', ({ tenant }) => tenant.payments);
  route('billing.payment.get', 'GET', '/api/payment/v1/payment/history/{orderID}', 'billing.read', ({ tenant, params }) =>
    find(tenant.payments, 'orderID', params.orderID as string, 'transaction'),
  );
  route('billing.subscription', 'GET', '/api/user/v1/dashboard/subscription', 'billing.read', ({ tenant }) => tenant.subscription);
  route('billing.quota', 'GET', '/api/ai/v1/quota', 'quota.read', ({ tenant }) => ({
    aiQuota: { ...tenant.aiQuota, remaining: tenant.aiQuota.total - tenant.aiQuota.used },
    messageQuota: { ...tenant.messageQuota, remaining: quotaLeft(tenant) },
  }));
  route('billing.usage', 'GET', '/api/ai/v1/usage', 'quota.read', ({ tenant }) => tenant.usage);
  route('tenant.setting', 'GET', '/api/user/v1/dashboard/setting', 'tenant.setting.read', ({ tenant }) => tenant.setting);
  route('tenant.list', 'GET', '/api/user/v1/dashboard/tenant/list', 'tenant.read', ({ tenant }) =>
    [tenants.A, tenants.B]
      .filter((item) => item === tenant || tenant === tenants.A)
      .map((item) => ({ tenantId: item.tenantId, name: item.name, role: item === tenant ? 'owner' : 'agent' })),
  );

  /** Literal segments beat parameters, left to right, as a real router does. */
  function match(method: string, rawPath: string): { route: Route; params: Record<string, string> } | undefined {
    const segments = rawPath.split('/');
    let best: { route: Route; params: Record<string, string>; score: string } | undefined;
    for (const candidate of routes) {
      if (candidate.method !== method || candidate.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      let score = '';
      let ok = true;
      for (let index = 0; index < segments.length && ok; index++) {
        const want = candidate.segments[index] as string;
        const have = segments[index] as string;
        const param = /^\{(\w+)\}$/.exec(want);
        if (param) {
          let decoded: string;
          try {
            decoded = decodeURIComponent(have);
          } catch {
            throw bad('malformed path encoding');
          }
          if (decoded === '') ok = false;
          params[param[1] as string] = decoded;
          score += '0';
        } else {
          ok = want === have;
          score += '1';
        }
      }
      if (ok && (!best || score > best.score)) best = { route: candidate, params, score };
    }
    return best;
  }

  function takeFault(operationId: string | null, method: string): Fault | undefined {
    const index = faults.findIndex(
      (fault) => (fault.operationId === undefined || fault.operationId === operationId) && (fault.method === undefined || fault.method === method),
    );
    if (index < 0) return undefined;
    const fault = faults[index] as Fault & { left: number };
    fault.left -= 1;
    if (fault.left <= 0) faults.splice(index, 1);
    return fault;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const rawPath = (req.url ?? '/').split('?')[0] as string;
    const record: SeenRequest = { method, path: req.url ?? '/', operationId: null, status: 0 };
    seen.push(record);
    const send = (status: number, payload: unknown, headers: Record<string, string | number> = {}) => {
      record.status = status;
      const body = JSON.stringify(payload);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
      res.end(body);
    };
    const fail = (error: ApiFailure, headers: Record<string, string | number> = {}) =>
      send(error.status, { status: error.status, errorCode: error.errorCode, message: error.message, data: null }, headers);

    // A path that cannot be decoded is bad input, answered once the key is checked: every endpoint needs a key first (spec section 5).
    let matched: ReturnType<typeof match>;
    let malformed: ApiFailure | undefined;
    try {
      matched = match(method, rawPath);
    } catch (error) {
      malformed = error as ApiFailure;
    }
    record.operationId = matched?.route.operationId ?? null;

    // Authentication: x-api-key, or Authorization: Bearer.
    const authorization = req.headers.authorization;
    const presented = (req.headers['x-api-key'] as string | undefined) ?? (authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined);
    const key = presented ? keys.get(presented) : undefined;
    if (!key || key.revoked || key.expiresAt <= Date.now()) {
      return fail(new ApiFailure(401, 40100, key?.revoked ? 'API key revoked' : key ? 'API key expired' : 'invalid API key'));
    }
    record.keyLabel = key.label;

    // Rate limits, per key and per tenant.
    const at = Date.now();
    const keyBucket = keyBuckets.get(presented!) ?? new Bucket(key.rateLimit, key.burst);
    keyBuckets.set(presented!, keyBucket);
    const tenantBucket = tenantBuckets.get(key.tenant.tenantId) ?? new Bucket(rateLimit * 3);
    tenantBuckets.set(key.tenant.tenantId, tenantBucket);
    const limited = !keyBucket.take(at) || !tenantBucket.take(at);
    const rateHeaders = () => ({
      'RateLimit-Limit': key.rateLimit,
      'RateLimit-Remaining': Math.min(keyBucket.remaining(at), tenantBucket.remaining(at)),
      'RateLimit-Reset': Math.max(keyBucket.secondsUntilFull(at), 0),
    });
    if (limited) {
      const retryAfter = Math.max(1, keyBucket.secondsUntilToken(at), tenantBucket.secondsUntilToken(at));
      return fail(new ApiFailure(429, 42900, 'rate limit exceeded'), { ...rateHeaders(), 'Retry-After': retryAfter });
    }

    if (malformed) return fail(malformed, rateHeaders());
    if (!matched) return fail(new ApiFailure(404, 40400, `no route ${method} ${rawPath}`), rateHeaders());
    const { route: hit, params } = matched;
    if (!key.scopes.has(hit.scope)) return fail(new ApiFailure(403, 40300, `API key lacks the scope ${hit.scope}`), rateHeaders());

    // The body, for writes.
    let body: Record<string, unknown> = {};
    if (method === 'POST' || method === 'PUT') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      // Request bodies are application/json (spec section 4). A body labelled otherwise is refused rather than read
      // anyway: a JSON parser in front of a real API leaves it unread, so a client that forgot the header would pass here only.
      if (text.trim() !== '' && !isJson(req.headers['content-type'])) {
        return fail(bad('a request body must be sent with content-type application/json'), rateHeaders());
      }
      if (text.trim() !== '') {
        try {
          const parsed: unknown = JSON.parse(text);
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
          body = parsed as Record<string, unknown>;
        } catch {
          return fail(bad('body must be a JSON object'), rateHeaders());
        }
      }
    }

    const fault = takeFault(hit.operationId, method);
    const work = () => {
      const data = hit.handler({ tenant: key.tenant, params, body });
      if (hit.mutating) carried.push({ operationId: hit.operationId, tenantId: key.tenant.tenantId, params: { ...params, ...body }, at: Date.now() });
      return data;
    };
    const run = () => {
      try {
        return { data: work() };
      } catch (error) {
        if (error instanceof ApiFailure) return { error };
        throw error;
      }
    };
    const answer = (outcome: ReturnType<typeof run>) =>
      outcome.error ? fail(outcome.error, rateHeaders()) : send(200, { status: 200, errorCode: 0, data: outcome.data }, rateHeaders());

    if (!fault) return answer(run());
    record.status = -1; // a fault answered
    switch (fault.kind) {
      case 'delay':
        // Like a real server, it does the work even if the client gave up waiting.
        await new Promise((resolve) => setTimeout(resolve, fault.delayMs ?? 1000));
        return answer(run());
      case 'status':
        if (fault.afterWork) run();
        return fail(new ApiFailure(fault.status ?? 500, 50000, fault.message ?? 'injected failure'), rateHeaders());
      case 'html': {
        if (fault.afterWork) run();
        const page = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>nginx</p></body></html>';
        res.writeHead(fault.status ?? 502, { 'content-type': 'text/html' });
        return void res.end(page);
      }
      case 'reset-before':
        return void req.socket.destroy();
      case 'reset-after':
        run();
        return void req.socket.destroy();
      case 'truncated': {
        const outcome = run();
        const full = JSON.stringify({ status: 200, errorCode: 0, data: outcome.data ?? null });
        res.writeHead(200, { 'content-type': 'application/json', ...rateHeaders() });
        return void res.end(full.slice(0, Math.max(1, Math.floor(full.length / 2))));
      }
      case 'not-envelope':
        run();
        return send(200, { ok: true, result: 'done' }, rateHeaders());
      case 'slow-body': {
        const outcome = run();
        const full = JSON.stringify({ status: 200, errorCode: 0, data: outcome.data ?? null });
        res.writeHead(200, { 'content-type': 'application/json', ...rateHeaders() });
        const pieces = 10;
        const size = Math.ceil(full.length / pieces);
        for (let index = 0; index < pieces && !res.destroyed; index++) {
          res.write(full.slice(index * size, (index + 1) * size));
          await new Promise((resolve) => setTimeout(resolve, (fault.delayMs ?? 2000) / pieces));
        }
        return void res.end();
      }
      case 'rate-limit':
        return fail(new ApiFailure(429, 42900, 'rate limit exceeded'), { ...rateHeaders(), 'RateLimit-Remaining': 0, 'Retry-After': fault.retryAfter ?? '1' });
      case 'redirect':
        record.status = 302;
        res.writeHead(302, { location: 'http://127.0.0.2:9/stolen' });
        return void res.end();
    }
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(`sandbox: handler error: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 500, errorCode: 50000, message: 'internal error', data: null }));
      }
    });
  });
  server.keepAliveTimeout = 10_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    keys: sandboxKeys,
    createKey,
    revokeKey: (key) => {
      const record = keys.get(key);
      if (record) record.revoked = true;
    },
    injectFault: (fault) => faults.push({ ...fault, left: fault.times ?? 1 }),
    clearFaults: () => void faults.splice(0),
    carriedOut: () => [...carried],
    requests: () => [...seen],
    clearLogs: () => {
      carried = [];
      seen = [];
    },
    tenant: (which) => tenants[which],
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
