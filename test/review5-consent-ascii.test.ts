// Review 5: keys beyond printable ASCII were refused by the stdio config and by keyOf (remote
// mode), but the OAuth consent page took one as it was typed and sent it to the API to check it
// (and kept it in the grant): the redactor knows the key's forms in ASCII only, so the API's echo
// of such a key could pass unredacted. The page now refuses it, saying why, and sends nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { authorizeUrl, openConsent, pkce, postConsent, register } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
let service: Service;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await serveOAuth(sandbox, logs);
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

describe('the consent page and keys beyond ASCII', () => {
  it('refuses a key with a character beyond ASCII and sends nothing to the API', async () => {
    const { client_id } = await register(service.url);
    for (const key of [`${sandbox.keys.full}\u00e9`, `caf\u00e9_${sandbox.keys.full}`, `${sandbox.keys.full}\u2019`]) {
      const page = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, resource: `${service.url}/mcp` }));
      const before = sandbox.requests().length;
      const answer = await postConsent(service.url, page, { key, scopes: ['contact.read'] });
      expect(answer.status).toBe(400);
      expect(answer.location).toBeNull();
      expect(answer.html).toMatch(/beyond ASCII/);
      expect(sandbox.requests().length).toBe(before);
    }
  });

  it('still takes a printable ASCII key with + / = . in it to the API', async () => {
    const { client_id } = await register(service.url);
    const page = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, resource: `${service.url}/mcp` }));
    const before = sandbox.requests().length;
    const answer = await postConsent(service.url, page, { key: 'sk_live_a+b/c=d.e', scopes: ['contact.read'] });
    expect(answer.status).toBe(400);
    expect(answer.html).toMatch(/refused this key/);
    expect(sandbox.requests().length).toBe(before + 1);
  });
});
