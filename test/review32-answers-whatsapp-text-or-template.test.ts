// Review 32 (answers): channel.whatsapp.send took a text and a template together, and its
// confirmation read "Send one WhatsApp message to 62… now: the text “…” and the template “…”".
// One WhatsApp message is either free text or an approved template (shared/src/assumptions.md:
// msisdn plus message, or template), and the API sends one of them: the sandbox sent the text
// alone, so the person agreed to a template that never went, and the caps counted one message
// where an API that sent both would send two. Now both together are refused before any preview,
// naming the two fields and what to do; either one alone is previewed as before. Through the
// built server, as a host runs it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchServer, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => sandbox?.close());

async function send(params: Record<string, unknown>) {
  const server = await launchServer('channel', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full });
  try {
    const result = await server.client.callTool({ name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', params } });
    const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
    return { text, structured: result.structuredContent as Record<string, unknown> | undefined, isError: result.isError };
  } finally {
    await server.close();
  }
}

it('a text and a template together are refused before any preview, and nothing is sent', async () => {
  const template = sandbox.tenant('A').templates[0]!.name;
  const answer = await send({ msisdn: '628123400003', message: 'Halo', template: { name: template } });
  expect(answer.isError).toBe(true);
  expect(answer.structured?.outcome).toBe('refused');
  expect(answer.text).toMatch(/^Invalid params for channel\.whatsapp\.send: params takes a message or a template, not both/);
  expect(answer.text).toMatch(/Nothing was sent\.$/);
  expect(sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send')).toHaveLength(0);
});

it('either one alone is still previewed', async () => {
  const template = sandbox.tenant('A').templates[0]!.name;
  for (const params of [{ message: 'Halo' }, { template: { name: template } }]) {
    const answer = await send({ msisdn: '628123400004', ...params });
    expect(answer.structured?.outcome).toBe('preview');
  }
});
