// Review 3: malformed requests to the OAuth routes are the caller's error (4xx), not ours: a
// Basic header whose credentials are not valid form-urlencoding, and a method the metadata
// documents do not serve, used to be logged as errors and answered 503 "the OAuth state could not
// be reached". And a client's name cannot carry invisible or direction-changing characters onto
// the consent page.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { authorizeUrl, openConsent, pkce, register } from './oauth-helpers.js';
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

/** One raw HTTP/1.1 request; the status line of the answer. */
function statusLine(request: string): Promise<string> {
  const port = Number(new URL(service.url).port);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.on('data', (chunk) => void (answer += chunk));
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

describe('malformed OAuth requests', () => {
  it('Basic credentials that are not valid urlencoding are an unauthenticated client (401), not a server error', async () => {
    const { client_id } = await register(service.url);
    for (const credentials of ['%E0%A4%A:secret', `${client_id}:%zz`]) {
      logs.length = 0;
      const answer = await fetch(`${service.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'emcp_rt_x' }),
      });
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { error: string }).error).toBe('invalid_client');
      expect(logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
    }
  });

  it('the metadata documents answer other methods 405, not 503', async () => {
    logs.length = 0;
    for (const method of ['TRACE', 'DELETE', 'POST']) {
      const line = await statusLine(
        `${method} /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect(line, method).toMatch(/^HTTP\/1\.1 405/);
    }
    expect(logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });

  it('invisible and direction-changing characters are taken out of a client name', async () => {
    const { client_id, client_name } = await register(service.url, { client_name: 'Claude\u202Efdp.exe\u200B\u0007' });
    expect(client_name).toBe('Claudefdp.exe');
    const page = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge }));
    expect(page.html).toContain('<strong>Claudefdp.exe</strong>');
    for (const char of ['\u202E', '\u200B', '\u0007']) expect(page.html.includes(char)).toBe(false);
  });

  it('a long client name is cut at 100 characters, never inside one (no half of an emoji left)', async () => {
    const { client_name } = await register(service.url, { client_name: `${'a'.repeat(99)}😀😀` });
    expect(client_name).toBe(`${'a'.repeat(99)}😀`);
    expect(String(client_name)).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});
