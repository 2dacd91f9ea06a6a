// Review 19: ENGAGE_AUTH_HEADER says how the key is sent ("Key header" in the Claude Desktop
// bundle's form), and a person may paste the key there, or `Bearer <key>`, the header's value.
// Its problem text quoted the value: `must be one of x-api-key, bearer, not "eng_live_…"`. Where
// ENGAGE_API_KEY did not hold that key too (not set, or still the README's placeholder), nothing
// redacted it: the key went to stderr, and in every tool answer to the model. A value that is
// not a word (a mistyped choice) is no longer quoted.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';

const KEY = 'eng_live_7f3a9c2e5b8d1f4a6c0e2b9d7f1a3c5e';
const SECRET = KEY.slice('eng_live_'.length, 'eng_live_'.length + 16);

/** The built contact server with these settings: its stderr, and its answer to one call. */
async function started(env: Record<string, string>): Promise<{ stderr: string; answer: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [serverEntry('contact')],
    env: { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: 'https://api.example.com', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'review19', version: '0' });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    return { stderr, answer: textOf(result as never) };
  } finally {
    await client.close();
  }
}

describe('a key put in ENGAGE_AUTH_HEADER is not shown', () => {
  it.each([
    ['the key, no ENGAGE_API_KEY', { ENGAGE_AUTH_HEADER: KEY }],
    ['Bearer and the key, no ENGAGE_API_KEY', { ENGAGE_AUTH_HEADER: `Bearer ${KEY}` }],
    ['the key, ENGAGE_API_KEY still the placeholder', { ENGAGE_AUTH_HEADER: KEY, ENGAGE_API_KEY: '<your tenant API key>' }],
  ])('%s: neither stderr nor the model sees it', async (_, env) => {
    const { stderr, answer } = await started(env);
    expect(answer).toMatch(/ENGAGE_AUTH_HEADER must be one of x-api-key, bearer/);
    expect(stderr).toMatch(/ENGAGE_AUTH_HEADER must be one of x-api-key, bearer/);
    expect(answer).not.toContain(SECRET);
    expect(stderr).not.toContain(SECRET);
  });

  it('a mistyped choice is still quoted', async () => {
    const { answer } = await started({ ENGAGE_AUTH_HEADER: 'Authorization', ENGAGE_API_KEY: KEY });
    expect(answer).toContain('ENGAGE_AUTH_HEADER must be one of x-api-key, bearer, not "authorization".');
  });
});
