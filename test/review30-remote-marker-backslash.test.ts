// Review 30 (the gap review29 left): a customer text shaped like our markers is shown with one
// backslash before its bracket (`\[cut: …`), but the customer's own backslash before it was kept as
// it was: "C:\[cut: 4000 characters in all]" was shown "C:\\[cut: …", which reads, as backslashes
// read everywhere, as an escaped backslash and then a bare marker of ours. Attacked through the
// built contact server over stdio, on a small list (read whole) and one past 1 MiB (read as it
// arrives). Now the customer's backslashes right before a marker's bracket are doubled and the
// escape added to them, so an odd run before a bracket always means the customer wrote it and an
// even run (none included) that it is ours.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { shownText } from '../shared/src/safe/sanitize.js';
import { LIST_PATHS, bothListPathsPerFile } from './both-list-paths.js';
import { structuredOf, textOf } from './helpers.js';

const IMITATIONS = ['C:\\[cut]', 'C:\\[cut: 4000 characters in all]', 'Two \\\\［not shown: nested more than 64 levels deep］', 'Dewi\\\\\\[redacted]'];
const SHOWN = [
  'C:\\\\\\[cut]',
  'C:\\\\\\[cut: 4000 characters in all]',
  'Two \\\\\\\\\\［not shown: nested more than 64 levels deep］',
  'Dewi\\\\\\\\\\\\\\[redacted]',
];
/** Backslashes before no marker's bracket are the customer's, shown as they are. */
const LEFT_ALONE = ['Eka \\[VIP]', 'Fajar\\\\ Shop'];

const rig = bothListPathsPerFile((sandbox, tenant) => {
  [...IMITATIONS, ...LEFT_ALONE].forEach((name, index) => {
    sandbox.tenant(tenant).contacts[index]!.name = name;
  });
});

/** The odd or even run of backslashes right before each bracket of `text` (its parity says whose the bracket is). */
function runsBeforeBrackets(text: string): number[] {
  return [...text.matchAll(/(\\*)[[［]/g)].map((match) => (match[1] as string).length);
}

describe.each(LIST_PATHS)('%s', (_, serverOf, tenant) => {
  const server = () => serverOf(rig);
  const idsOf = (from: number, count: number) =>
    rig.sandbox
      .tenant(tenant)
      .contacts.slice(from, from + count)
      .map((contact) => contact._id);

  it("a customer's backslashes before a marker's shape are doubled, so the run before its bracket stays odd", async () => {
    const result = (await server().client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 20 } })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    const data = (structuredOf(result) as { data: Array<{ _id: string; name: string }> }).data;
    const nameOf = (id: string) => data.find((contact) => contact._id === id)?.name;
    const count = IMITATIONS.length + LEFT_ALONE.length;
    expect(idsOf(0, count).map(nameOf)).toEqual([...SHOWN, ...LEFT_ALONE]);
    for (const shown of SHOWN) expect(runsBeforeBrackets(shown).every((run) => run % 2 === 1)).toBe(true);
    for (const shown of SHOWN) expect(textOf(result)).toContain(JSON.stringify(shown).slice(1, -1));
  });

  it('search matches the name as shown (its backslashes doubled), not as the API sent it', async () => {
    const search = async (words: string) => {
      const result = (await server().client.callTool({
        name: 'contact_read',
        arguments: { operationId: 'contact.list', search: words, limit: 500 },
      })) as CallToolResult;
      return (structuredOf(result) as { data: Array<{ _id: string }> }).data.map((contact) => contact._id);
    };
    const [first] = idsOf(0, 1) as [string];
    expect(await search('name:C:\\\\\\[cut]')).toContain(first);
    expect(await search('name:C:\\[cut]')).not.toContain(first);
  });
});

describe('shownText', () => {
  it('shows every escaped marker bracket after an odd run of backslashes, and other backslashes as they are', () => {
    expect(IMITATIONS.map(shownText)).toEqual(SHOWN);
    expect(LEFT_ALONE.map(shownText)).toEqual(LEFT_ALONE);
  });

  it('doubles a long run of backslashes once and escapes each of many brackets after it once', () => {
    const hostile = `${'\\'.repeat(200_000)}${'[cut '.repeat(20_000)}`;
    const shown = shownText(hostile);
    expect(runsBeforeBrackets(shown)[0]).toBe(400_001);
    expect(
      runsBeforeBrackets(shown)
        .slice(1)
        .every((run) => run === 1),
    ).toBe(true);
  });
});
