// The seven catalogs in one list, for the build (manifests), the docs and the tests.
import { manifestOf, type Domain, type DomainManifest } from '@engage-mcp/shared';
import { billing } from '../packages/billing/src/operations.js';
import { campaign } from '../packages/campaign/src/operations.js';
import { channel } from '../packages/channel/src/operations.js';
import { contact } from '../packages/contact/src/operations.js';
import { inbox } from '../packages/inbox/src/operations.js';
import { product } from '../packages/product/src/operations.js';
import { tenant } from '../packages/tenant/src/operations.js';

export const CATALOGS: Domain[] = [contact, campaign, inbox, channel, product, billing, tenant];

export function manifests(): Record<string, DomainManifest> {
  return Object.fromEntries(CATALOGS.map((domain) => [domain.name, manifestOf(domain)]));
}
