// review13: the consent page counts the keys one requester enters (20 in 10 minutes), so the page
// is no fast oracle for guessing keys. The connections page takes a key too, and answered every
// guess at once and without limit: a key with connections was told apart from a made-up one (its
// grants listed, each with a Revoke button), at the speed of one HMAC and one store read per guess,
// with no call to the API that would show the guessing there. It now counts the keys entered
// there with those of consent pages, and past the limit looks nothing up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { KEY_TRIES_PER_REQUESTER } from '../packages/http/src/oauth/authorize.js';
import { signIn } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
let service: Service;

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await serveOAuth(sandbox, []);
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

async function connectionsForm(issuer: string) {
  const page = await fetch(`${issuer}/oauth/connections`);
  const csrf = /name="csrf" value="([^"]*)"/.exec(await page.text())?.[1] ?? '';
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return (fields: Record<string, string>) =>
    fetch(`${issuer}/oauth/connections`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: issuer },
      body: new URLSearchParams({ csrf, ...fields }),
    }).then(async (answer) => ({ status: answer.status, html: await answer.text() }));
}

describe('review13: keys guessed on the connections page', () => {
  it('are counted with the consent pages’ keys: past the limit, a key with connections is not told apart', async () => {
    const key = sandbox.createKey(['contact.read', 'tenant.read'], { label: 'guessed' });
    const { clientId } = await signIn(service.url, key);
    const post = await connectionsForm(service.url);
    const listed = await post({ action: 'list', api_key: key });
    expect(listed.html).toContain(clientId);

    for (let guess = 0; guess < KEY_TRIES_PER_REQUESTER; guess++) await post({ action: 'list', api_key: `made-up-${guess}` });
    const after = await post({ action: 'list', api_key: key });
    expect(after.html).not.toContain(clientId);
    expect(after.html).toContain(`More than ${KEY_TRIES_PER_REQUESTER} keys were entered from this network`);
  });
});
