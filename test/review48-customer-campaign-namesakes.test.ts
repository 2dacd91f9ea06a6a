// Review 48 (customer text): two campaigns the model and the person see under one name (an import
// made a second “Promo Desember”, or one with a zero-width space in it, which is removed before
// anyone sees it) were told apart in campaign.send's preview by their ids alone: the person agreed
// to “Promo Desember” with no sign that another campaign bears that name, and could send the
// other audience. The preview says so now, with the other's id, for send, cancel and delete.
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

async function statementOf(operationId: string, id: string): Promise<string> {
  const server = await serve(operationId, { env: { ENGAGE_CONFIRM: 'all' } });
  return String(structuredOf(await server.call(operationId, { id })).preview);
}

it.each(['campaign.send', 'campaign.cancel', 'campaign.delete'])('%s: another campaign shown under the same name is said, with its id', async (operationId) => {
  const [meant, namesake] = sandbox.tenant('A').campaigns;
  meant!.name = 'Promo Desember';
  namesake!.name = 'Promo\u200b Desember';
  const statement = await statementOf(operationId, meant!._id);
  expect(statement).toContain(`- Another campaign is shown under the same name: ${namesake!._id}. Check that ${meant!._id} is the one meant before agreeing.`);
});

it('names that differ only in case or spacing count as the same; other names do not', async () => {
  const [meant, namesake, other] = sandbox.tenant('A').campaigns;
  meant!.name = 'Promo Desember';
  namesake!.name = 'promo  DESEMBER ';
  other!.name = 'Promo Desember 2';
  const statement = await statementOf('campaign.send', meant!._id);
  expect(statement).toContain(`same name: ${namesake!._id}.`);
  expect(statement).not.toContain(other!._id);
});

it('a campaign with a name of its own has no such line', async () => {
  const [meant] = sandbox.tenant('A').campaigns;
  meant!.name = 'Promo Desember unik';
  expect(await statementOf('campaign.send', meant!._id)).not.toContain('same name');
});
