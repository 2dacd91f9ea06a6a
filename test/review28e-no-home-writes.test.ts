// Review 28e: review28c's store for a stdio server with no home folder and no ENGAGE_STATE_DIR
// (every call rejects) was tried with one write that needs no yes. Here every write path of the
// built server: a gated write asked with a token (the default), one asked through the host's
// question (elicitation, answered yes), one with an idempotencyKey, and a send under a daily cap
// (whose preview counts what was sent today): each is refused before anything is sent or any
// question asked, saying what to set, and reads still work.
import { describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf, type TestClient } from './helpers.js';
import { homelessArgs, homelessRigPerFile } from './homeless.js';

const rig = homelessRigPerFile('review28e-no-home-');

/** The built `domain` server run with no HOME (nor XDG_STATE_HOME) and no home folder to be found. */
async function homelessServer(
  domain: Parameters<typeof serverEntry>[0],
  env: Record<string, string>,
  elicitYes: boolean,
): Promise<{ client: TestClient; stderr: () => string }> {
  const args = homelessArgs(serverEntry(domain), rig.dir, ['HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME']);
  const transport = new StdioClientTransport({
    command: 'env',
    args,
    env: { PATH: process.env.PATH ?? '', ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_BASE_URL: rig.sandbox.baseUrl, ...env },
    stderr: 'pipe',
    cwd: rig.dir,
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const asked: string[] = [];
  const client = makeClient(
    elicitYes
      ? {
          kind: 'v1',
          elicit: (message) => {
            asked.push(message);
            return { action: 'accept', content: { confirm: true } };
          },
        }
      : { kind: 'v1' },
  );
  await client.connect(transport);
  return { client, stderr: () => `${stderr}${asked.length > 0 ? `\nasked: ${asked.length}` : ''}` };
}

const REFUSED = /^Refused by a guardrail: no home folder could be found[\s\S]*set ENGAGE_STATE_DIR to an absolute folder[\s\S]*Nothing was sent/;

const CASES: Array<{
  name: string;
  domain: Parameters<typeof serverEntry>[0];
  env: Record<string, string>;
  elicit: boolean;
  tool: string;
  args: Record<string, unknown>;
}> = [
  {
    name: 'a gated write asked with a token (ENGAGE_CONFIRM default)',
    domain: 'contact',
    env: {},
    elicit: false,
    tool: 'contact_action',
    args: { operationId: 'contact.delete', params: { id: 'c_1' } },
  },
  {
    name: "a gated write asked through the host's question, answered yes",
    domain: 'contact',
    env: {},
    elicit: true,
    tool: 'contact_action',
    args: { operationId: 'contact.delete', params: { id: 'c_1' } },
  },
  {
    name: 'a write with an idempotencyKey (ENGAGE_CONFIRM=none)',
    domain: 'contact',
    env: { ENGAGE_CONFIRM: 'none' },
    elicit: false,
    tool: 'contact_action',
    args: { operationId: 'contact.create', params: { name: 'No Home', msisdn: '081277770002' }, idempotencyKey: 'no-home-1' },
  },
  {
    name: 'a send under a daily cap, asked with a token',
    domain: 'channel',
    env: { ENGAGE_CONFIRM: 'all', ENGAGE_CAP_MESSAGES_PER_DAY: '10' },
    elicit: false,
    tool: 'channel_action',
    args: { operationId: 'channel.whatsapp.send', params: { msisdn: '6281277770003', message: 'Halo' } },
  },
];

describe('a stdio server with no home folder and no ENGAGE_STATE_DIR', () => {
  it.each(CASES)('$name: refused before anything is sent or asked, saying what to set', async ({ domain, env, elicit, tool, args }) => {
    const { client, stderr } = await homelessServer(domain, env, elicit);
    const before = rig.sandbox.carriedOut().length;
    try {
      const result = await client.callTool({ name: tool, arguments: args });
      expect(result.isError, `${textOf(result)}\n${stderr()}`).toBe(true);
      expect(textOf(result)).toMatch(REFUSED);
      expect(structuredOf(result).confirmationToken).toBeUndefined();
      expect(stderr()).not.toContain('asked:');
      expect(stderr()).not.toMatch(/Internal error|uv_os_homedir/);
    } finally {
      await client.close();
    }
    expect(rig.sandbox.carriedOut().length).toBe(before);
  });
});
