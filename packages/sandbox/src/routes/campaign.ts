// Campaigns: list, analytics, create (a draft), send, cancel, progress, delete. A sent campaign
// goes draft → sending → completed in four batches, one send step apart, each batch deducting
// message quota; cancelling stops it between batches.
import { objectId, type Campaign, type TenantState } from '../data.js';
import { conflict, noQuota } from '../failure.js';
import type { SandboxState } from '../state.js';
import { checkChannel, str } from './input.js';
import { find, now, quotaLeft, route, type HandlerContext } from './route.js';

/** A campaign as the API shows it: without its recipients, message and delivery counts. */
function publicCampaign(campaign: Campaign) {
  const { recipientIds: _recipients, message: _message, failedCount: _failed, openedCount: _opened, ...rest } = campaign;
  return rest;
}

function startSending(sandbox: SandboxState, tenant: TenantState, campaign: Campaign) {
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
    sandbox.afterSendStep(step);
  };
  sandbox.afterSendStep(step);
}

function analytics({ tenant }: HandlerContext) {
  return {
    campaigns: tenant.campaigns.length,
    sent: tenant.campaigns.reduce((sum, campaign) => sum + campaign.sentCount, 0),
    opened: tenant.campaigns.reduce((sum, campaign) => sum + campaign.openedCount, 0),
    failed: tenant.campaigns.reduce((sum, campaign) => sum + campaign.failedCount, 0),
  };
}

/** A draft addressed to every contact (every contact with an email, for an email campaign). */
function createCampaign({ tenant, body }: HandlerContext) {
  const name = str(body, 'name', true, 200)!;
  const message = str(body, 'message', true)!;
  const channel = str(body, 'channel', true, 20)!;
  checkChannel(channel);
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
}

function sendCampaign({ tenant, params, sandbox }: HandlerContext) {
  const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
  if (campaign.status !== 'draft') throw conflict(`campaign is ${campaign.status}; only a draft can be sent, and only once`);
  if (campaign.totalRecipients === 0) throw conflict('campaign has no recipients');
  if (quotaLeft(tenant) < campaign.totalRecipients) throw noQuota(`not enough message quota: ${campaign.totalRecipients} needed, ${quotaLeft(tenant)} left`);
  startSending(sandbox, tenant, campaign);
  return { _id: campaign._id, status: campaign.status, totalRecipients: campaign.totalRecipients };
}

function cancelCampaign({ tenant, params }: HandlerContext) {
  const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
  if (campaign.status !== 'sending') throw conflict(`campaign is ${campaign.status}; only a sending campaign can be cancelled`);
  campaign.status = 'cancelled';
  campaign.finishedAt = now();
  return { _id: campaign._id, status: campaign.status, sentCount: campaign.sentCount, notSent: campaign.totalRecipients - campaign.sentCount };
}

function progress({ tenant, params }: HandlerContext) {
  const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
  return {
    _id: campaign._id,
    status: campaign.status,
    totalRecipients: campaign.totalRecipients,
    sentCount: campaign.sentCount,
    failedCount: campaign.failedCount,
    percent: campaign.totalRecipients ? Math.round((campaign.sentCount / campaign.totalRecipients) * 100) : 0,
  };
}

function deleteCampaign({ tenant, params }: HandlerContext) {
  const campaign = find(tenant.campaigns, '_id', params.id as string, 'campaign');
  if (campaign.status === 'sending') throw conflict('campaign is sending; cancel it first');
  tenant.campaigns.splice(tenant.campaigns.indexOf(campaign), 1); // its statistics go with it
  return { deleted: campaign._id };
}

export const campaignRoutes = [
  route('campaign.list', 'GET', '/api/campaign/campaigns', 'campaign.read', ({ tenant }) => tenant.campaigns.map(publicCampaign)),
  route('campaign.analytics', 'GET', '/api/campaign/campaigns/analytics', 'campaign.read', analytics),
  route('campaign.create', 'POST', '/api/campaign/campaigns', 'campaign.manage', createCampaign),
  route('campaign.send', 'POST', '/api/campaign/campaigns/{id}/send', 'campaign.send', sendCampaign),
  route('campaign.cancel', 'POST', '/api/campaign/campaigns/{id}/cancel', 'campaign.control', cancelCampaign),
  route('campaign.progress', 'GET', '/api/campaign/campaigns/{id}/progress', 'campaign.read', progress),
  route('campaign.delete', 'DELETE', '/api/campaign/campaigns/{id}', 'campaign.manage', deleteCampaign),
];
