// A search that names a field no record has (`nme:Budi`, a typo of `name`) matched nothing and said
// nothing more, so the model concluded there was no Budi; `fields` naming such a field already got
// "No record has the field(s) …". Noticed by review32-answers. Now a search that matches nothing
// says which of the fields it names no record has, on both ways a list is read (whole, and as it
// arrives past 1 MiB). A field no record has is never named when a record matched, nor when the
// name holds a form of the key.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIST_PATHS, bothListPathsPerFile } from './both-list-paths.js';
import { structuredOf, textOf } from './helpers.js';

const rig = bothListPathsPerFile(() => undefined);

describe.each(LIST_PATHS)('%s', (_, serverOf) => {
  const search = async (words: string) =>
    (await serverOf(rig).client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', search: words } })) as CallToolResult;
  const notesOf = (result: CallToolResult) => ((structuredOf(result) as { notes?: string[] }).notes ?? []).join(' ');

  it('says the field a search names is on no record, when nothing matched', async () => {
    const result = await search('nme:Budi');
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(notesOf(result)).toContain('No record has the field "nme" that the search names');
    expect(textOf(result)).toContain('No record has the field "nme" that the search names');
  });

  it('says nothing of the kind when the field exists, or when a record matched', async () => {
    expect(notesOf(await search('name:Nobody-Has-This-Name'))).not.toContain('that the search names');
    expect(notesOf(await search('nme:Budi name:x'))).toContain('"nme"');
    expect(notesOf(await search('nme:Budi name:x'))).not.toContain('"name"');
  });
});
