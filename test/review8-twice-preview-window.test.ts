// review8: a preview's token is stamped with when it was ISSUED, but its statement (and its "already
// sent" warning) is composed earlier, before the caps' look-ups. A send of exactly this write that
// goes out between the two is neither named in the preview nor caught by the claim's "sent since
// this yes" check: the person says yes to a preview that does not mention it, and it is sent twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
});
afterAll(() => api.close());

const campaigns = envelope([{ _id: 'c1', name: 'Spring', status: 'draft', channel: 'whatsapp', totalRecipients: 10, sentCount: 0, createdAt: '2026-01-01' }]);
const sends = () => api.requests.filter((request) => request.method === 'POST' && request.path.endsWith('/c1/send')).length;

describe('review8: a send that goes out while a preview is being composed', () => {
  it('is named in that preview, or its token is refused at the claim', async () => {
    let gets = 0;
    let holdAt = -1;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reachedHold!: () => void;
    const reached = new Promise<void>((resolve) => (reachedHold = resolve));
    api.respond(async (request) => {
      if (request.method === 'GET') {
        gets++;
        if (gets === holdAt) {
          reachedHold();
          await held;
        }
        return request.path.includes('/quota') ? envelope({ messageQuota: 1000 }) : campaigns;
      }
      return envelope({ _id: 'c1', status: 'sending' });
    });
    const server = await inProcess(
      DOMAINS.campaign!,
      { baseUrl: api.baseUrl, keys: { full: api.key } as never },
      { env: { ENGAGE_CAP_MESSAGES_PER_DAY: '100' } },
    );
    try {
      // How many look-ups one preview makes: the last is the caps' count, after the statement was composed.
      gets = 0;
      const t1 = structuredOf(await server.call('campaign.send', { id: 'c1' })).confirmationToken as string;
      const perPreview = gets;
      expect(perPreview).toBeGreaterThan(1);

      gets = 0;
      holdAt = perPreview;
      const slowPreview = server.call('campaign.send', { id: 'c1' });
      await reached; // the preview's statement is composed; its caps' look-up is on its way
      const first = await server.call('campaign.send', { id: 'c1' }, { confirmationToken: t1 });
      expect(first.isError, textOf(first)).toBeFalsy();
      expect(sends()).toBe(1);
      release();
      const preview = await slowPreview;
      const t2 = structuredOf(preview).confirmationToken as string;
      const warned = /already sent exactly this/.test(textOf(preview));
      const second = await server.call('campaign.send', { id: 'c1' }, { confirmationToken: t2 });
      // Either the person was told it was already sent (then a second send is their informed choice), or it is refused.
      if (!warned) {
        expect(sends(), `preview without a warning:\n${textOf(preview)}\n---\n${textOf(second)}`).toBe(1);
        expect(second.isError).toBe(true);
      }
    } finally {
      release();
      await server.close();
    }
  }, 20_000);
});
