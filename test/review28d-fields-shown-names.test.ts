// Review 28d (noticed by review 28a, which made `search` match the text the model is shown):
// `fields` still matched the API's raw field names. The model is shown a field the API names
// "ta\u200bgs" (a zero-width space) as "tags" (shared/src/safe/sanitize.ts), so that is the name
// it asks for. Attacked: a contact whose tags come under "ta\u200bgs", and one with a field
// "no\u200bte" that no other contact has, sent by the sandbox as raw UTF-8. Found: through the
// built contact server over stdio, contact.list showed them as "tags" and "note", yet
// `fields: ["tags"]` left that contact's tags out, and `fields: ["note"]` returned no note and said
// "No record has the field(s) "note"", in a small list (read whole) and in one past 1 MiB (read as
// it arrives). Now projection and that note go by the names the model is shown, on both paths.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { project } from '../shared/src/safe/render.js';
import { cleanData } from '../shared/src/safe/sanitize.js';
import { LIST_PATHS, bothListPathsPerFile } from './both-list-paths.js';
import { structuredOf, textOf } from './helpers.js';

const rig = bothListPathsPerFile((sandbox, tenant) => {
  const [first, second] = sandbox.tenant(tenant).contacts as unknown as Array<Record<string, unknown>>;
  delete first!.tags;
  first!['ta\u200bgs'] = ['vip'];
  second!['no\u200bte'] = 'call after 5';
});

type Listed = { data: Array<Record<string, unknown>>; notes?: string[] };
const list = async (server: LaunchedServer, extra: Record<string, unknown>) => {
  const result = (await server.client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 5, ...extra } })) as CallToolResult;
  expect(result.isError, textOf(result)).toBeFalsy();
  return { ...(structuredOf(result) as Listed), text: textOf(result) };
};

describe.each(LIST_PATHS)('%s', (_, serverOf, tenant) => {
  const server = () => serverOf(rig);
  it('the model is shown the fields as "tags" and "note"', async () => {
    const [first, second] = rig.sandbox.tenant(tenant).contacts;
    const { data } = await list(server(), {});
    expect(data.find((contact) => contact._id === first!._id)?.tags).toEqual(['vip']);
    expect(data.find((contact) => contact._id === second!._id)?.note).toBe('call after 5');
  });

  it('`fields: ["tags"]` returns the tags shown as "tags"', async () => {
    const first = rig.sandbox.tenant(tenant).contacts[0]!;
    const { data } = await list(server(), { fields: ['tags'] });
    expect(data.find((contact) => contact._id === first._id)).toEqual({ _id: first._id, tags: ['vip'] });
  });

  it('`fields: ["note"]` returns the note, and does not say no record has it', async () => {
    const second = rig.sandbox.tenant(tenant).contacts[1]!;
    const { data, notes, text } = await list(server(), { fields: ['note'] });
    expect(data.find((contact) => contact._id === second._id)).toEqual({ _id: second._id, note: 'call after 5' });
    expect(notes ?? []).not.toContainEqual(expect.stringContaining('No record has'));
    expect(text).not.toContain('No record has');
  });

  it('a field name asked for with an invisible character is the name the model sees', async () => {
    const second = rig.sandbox.tenant(tenant).contacts[1]!;
    const { data, notes } = await list(server(), { fields: ['no\u200bte'] });
    expect(data.find((contact) => contact._id === second._id)).toEqual({ _id: second._id, note: 'call after 5' });
    expect(notes ?? []).not.toContainEqual(expect.stringContaining('No record has'));
  });
});

describe('projection, of two fields shown under one name', () => {
  it('keeps the one the model is shown (the last, as cleaning keeps it)', () => {
    const record = { _id: 'c1', tags: ['first'], 'ta\u200bgs': ['last'], name: 'Budi' };
    expect(cleanData(record)).toEqual({ _id: 'c1', tags: ['last'], name: 'Budi' });
    expect(cleanData(project(record, ['tags'], '_id'))).toEqual({ _id: 'c1', tags: ['last'] });
  });
});
