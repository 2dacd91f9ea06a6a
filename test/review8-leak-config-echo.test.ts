// A server whose configuration has a problem answers every call with the problem, and drops the
// key from redaction (config undefined → keyRedactor([]), createLogger(..., [])); now ENGAGE_API_KEY
// as it was set is redacted all the same (ConfigResult's secrets). The problem text
// quotes the bad setting's value (40 characters). A user who takes ENGAGE_AUTH_HEADER for the
// header itself (ENGAGE_AUTH_HEADER="Bearer <key>" or the key alone) then has the key in every
// tool answer the model reads, although ENGAGE_API_KEY holds that very key.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { envelope, HOSTILE_KEY, startHostileApi, type HostileApi } from './hostile-api.js';
import { keyScanner } from './leaks.js';

let api: HostileApi;
const open: InProcess[] = [];
const scanner = keyScanner(HOSTILE_KEY);

beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope([]));
});
afterAll(async () => {
  await Promise.all(open.map((server) => server.close()));
  await api?.close();
});

describe('a configuration problem does not switch redaction off', () => {
  it.each([
    ['ENGAGE_AUTH_HEADER', `Bearer ${HOSTILE_KEY}`],
    ['ENGAGE_AUTH_HEADER', HOSTILE_KEY],
    ['ENGAGE_TIMEOUT_MS', HOSTILE_KEY],
  ])('%s=%s: the answer names the problem, never the key that ENGAGE_API_KEY holds', async (name, value) => {
    const server = await inProcess(DOMAINS.contact!, { baseUrl: api.baseUrl, keys: { full: HOSTILE_KEY } as never }, { env: { [name]: value } });
    open.push(server);
    const result = await server.call('contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`${name} must be`));
    expect(scanner.find(textOf(result))).toBeUndefined();
  });

  it('the built stdio server: its start-up line on stderr does not carry the key either', async () => {
    const child = spawn(process.execPath, ['packages/contact/dist/index.js'], {
      env: { PATH: process.env.PATH, ENGAGE_API_KEY: HOSTILE_KEY, ENGAGE_BASE_URL: api.baseUrl, ENGAGE_AUTH_HEADER: HOSTILE_KEY },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    await new Promise<void>((resolve) =>
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        if (/not configured/.test(stderr)) resolve();
      }),
    );
    child.kill();
    expect(stderr).toMatch(/ENGAGE_AUTH_HEADER must be/);
    expect(scanner.find(stderr)).toBeUndefined();
  });
});
