// Review 28a (left open by review 27c): `search` compared the API's raw text, while the model is
// shown it cleaned (invisible characters removed, shared/src/safe/sanitize.ts). Attacked: contacts
// named "Bu\u200bdi Santoso" (a zero-width space) and "Bu\u00addi Rahma" (a soft hyphen), and a
// contact tagged "v\u200bip", written by customers and sent by the sandbox as raw UTF-8 (no JSON
// escape). Found: through the built contact server over stdio, contact.list showed them as "Budi
// Santoso", "Budi Rahma" and "vip", yet `search: "budi"` and `search: "tags:vip"` missed them,
// in a small list (read whole) and in one past 1 MiB (read as it arrives, whose prefilter looks at
// the raw JSON). Now a record matches by the text the model is shown, on both paths alike.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { LIST_PATHS, bothListPathsPerFile } from './both-list-paths.js';
import { structuredOf, textOf } from './helpers.js';

const rig = bothListPathsPerFile((sandbox, tenant) => {
  const [first, second, third] = sandbox.tenant(tenant).contacts;
  first!.name = 'Bu\u200bdi Santoso';
  second!.name = 'Bu\u00addi Rahma';
  third!.tags = ['v\u200bip'];
});

const list = async (server: LaunchedServer, extra: Record<string, unknown>) => {
  const result = (await server.client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', ...extra } })) as CallToolResult;
  expect(result.isError, textOf(result)).toBeFalsy();
  return structuredOf(result) as { data: Array<{ _id: string; name: string; tags?: string[] }>; page: { matched: number; total: number } };
};

describe.each(LIST_PATHS)('%s', (_, serverOf, tenant) => {
  const server = () => serverOf(rig);
  it('a name shown as "Budi …" is found by `search: "budi"`', async () => {
    const [first, second] = rig.sandbox.tenant(tenant).contacts;
    const found = await list(server(), { search: 'budi', limit: 500 });
    const names = found.data.map((contact) => contact.name);
    expect(names).toContain('Budi Santoso');
    expect(names).toContain('Budi Rahma');
    expect(found.data.map((contact) => contact._id)).toEqual(expect.arrayContaining([first!._id, second!._id]));
    // Every record found is one the model sees "budi" in.
    for (const contact of found.data) expect(JSON.stringify(contact).toLowerCase()).toContain('budi');
  });

  it('a tag shown as "vip" is found by `search: "tags:vip"`', async () => {
    const third = rig.sandbox.tenant(tenant).contacts[2]!;
    const found = await list(server(), { search: 'tags:vip', limit: 500 });
    expect(found.data.find((contact) => contact._id === third._id)?.tags).toEqual(['vip']);
  });

  it('a search word holding an invisible character is the word the model sees', async () => {
    const plain = await list(server(), { search: 'budi', limit: 500 });
    const hidden = await list(server(), { search: 'bu\u200bdi', limit: 500 });
    expect(hidden).toEqual(plain);
  });
});
