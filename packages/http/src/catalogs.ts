// The seven domains remote mode serves, in the order of the stdio servers.
import type { Domain } from '@engage-mcp/shared';
import { billing } from '../../billing/src/operations.js';
import { campaign } from '../../campaign/src/operations.js';
import { channel } from '../../channel/src/operations.js';
import { contact } from '../../contact/src/operations.js';
import { inbox } from '../../inbox/src/operations.js';
import { product } from '../../product/src/operations.js';
import { tenant } from '../../tenant/src/operations.js';

export const CATALOGS: Domain[] = [contact, campaign, inbox, channel, product, billing, tenant];
