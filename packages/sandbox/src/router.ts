// The route table of every domain, and matching a request's method and path against it.
import { bad } from './failure.js';
import { billingRoutes } from './routes/billing.js';
import { campaignRoutes } from './routes/campaign.js';
import { channelRoutes } from './routes/channel.js';
import { contactRoutes } from './routes/contact.js';
import { inboxRoutes } from './routes/inbox.js';
import { productRoutes } from './routes/product.js';
import type { Route } from './routes/route.js';

/** Every endpoint of the spec's table (section 4). */
export const ROUTES: readonly Route[] = [...contactRoutes, ...campaignRoutes, ...inboxRoutes, ...channelRoutes, ...productRoutes, ...billingRoutes];

export interface Match {
  route: Route;
  params: Record<string, string>;
}

/**
 * The route for `method` and `rawPath` (no query), with its path parameters decoded; literal
 * segments beat parameters, left to right, as a real router does. Throws a 400 for a parameter
 * that cannot be decoded.
 */
export function match(method: string, rawPath: string): Match | undefined {
  const segments = rawPath.split('/');
  let best: (Match & { score: string }) | undefined;
  for (const candidate of ROUTES) {
    if (candidate.method !== method || candidate.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let score = '';
    let ok = true;
    for (let index = 0; index < segments.length && ok; index++) {
      const want = candidate.segments[index] as string;
      const have = segments[index] as string;
      const param = /^\{(\w+)\}$/.exec(want);
      if (param) {
        const decoded = decodeSegment(have);
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

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw bad('malformed path encoding');
  }
}
