// The seven domains remote mode serves, in the order of the stdio servers.
import type { Domain } from '@engage-mcp/shared';
import { billing } from '@engage-mcp/billing/operations';
import { campaign } from '@engage-mcp/campaign/operations';
import { channel } from '@engage-mcp/channel/operations';
import { contact } from '@engage-mcp/contact/operations';
import { inbox } from '@engage-mcp/inbox/operations';
import { product } from '@engage-mcp/product/operations';
import { tenant } from '@engage-mcp/tenant/operations';

export const CATALOGS: Domain[] = [contact, campaign, inbox, channel, product, billing, tenant];
