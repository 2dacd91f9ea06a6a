// Channels: the tenant's WhatsApp, Telegram and email connections, WhatsApp's status and approved
// templates, and sending one WhatsApp message (free text or a template), which uses message quota.
import { randomBytes } from 'node:crypto';
import { bad, conflict, noQuota } from '../failure.js';
import { checkMsisdn, str } from './input.js';
import { find, now, quotaLeft, route, type HandlerContext } from './route.js';

function whatsappStatus({ tenant }: HandlerContext) {
  const whatsapp = tenant.channels.find((item) => item.type === 'whatsapp');
  return { connected: whatsapp?.status === 'connected', phone: tenant.setting.phone, qualityRating: 'GREEN', checkedAt: now() };
}

function sendWhatsapp({ tenant, body }: HandlerContext) {
  const msisdn = str(body, 'msisdn', true, 20)!;
  checkMsisdn(msisdn);
  const message = str(body, 'message', false);
  const template = body.template as { name?: unknown } | undefined;
  if (message === undefined && (typeof template !== 'object' || template === null || typeof template.name !== 'string'))
    throw bad('message or template.name is required');
  if (message === undefined && !tenant.templates.some((item) => item.name === template?.name)) throw bad('template is not an approved template');
  if (tenant.channels.find((item) => item.type === 'whatsapp')?.status !== 'connected') throw conflict('WhatsApp is not connected');
  if (quotaLeft(tenant) < 1) throw noQuota('no message quota left');
  tenant.messageQuota.used += 1;
  return { messageId: `wamid.${randomBytes(8).toString('hex')}`, msisdn, status: 'sent' };
}

export const channelRoutes = [
  route('channel.list', 'GET', '/api/channel/v1/channels', 'channel.read', ({ tenant }) => tenant.channels),
  // The spec's table has channel.get answer an array of channel: one channel comes back as a list of one.
  route('channel.get', 'GET', '/api/channel/v1/channels/{channelId}', 'channel.read', ({ tenant, params }) => [
    find(tenant.channels, 'channelId', params.channelId as string, 'channel'),
  ]),
  route('channel.whatsapp.status', 'GET', '/api/channel/v1/whatsapp/status', 'channel.read', whatsappStatus),
  route('channel.whatsapp.templates', 'GET', '/api/channel/v1/whatsapp/cloud/templates', 'channel.read', ({ tenant }) => tenant.templates),
  route('channel.whatsapp.send', 'POST', '/api/channel/v1/notification/send/whatsapp', 'inbox.reply', sendWhatsapp),
];
