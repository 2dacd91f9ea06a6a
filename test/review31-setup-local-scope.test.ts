// Review 31, Claude Code's own entries of our name in a project: `claude mcp add engage-contact …`
// without --scope user writes the server under that project in ~/.claude.json (its local scope),
// and Claude Code runs a local server over a user one of the same name. Setup writes the user one
// and said it was added or changed, so a new key or address counted everywhere but in that project,
// which went on running the old entry, unsaid. It now says so, naming the project, with how to
// remove that entry; the entry itself is the person's and stays as it was.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review31-local-');
const KEY = 'sk_live_31e5a7c9e1b3d5f7a9c2';

const NOTE =
  'Replaced in some projects (your setting, kept):\n' +
  "  engage-contact: in the project /work/app Claude Code runs that project's own engage-contact (local scope) instead; " +
  'remove it there (claude mcp remove --scope local engage-contact, in that folder) to have this one run there too.\n';

describe('our server also in a project of ~/.claude.json', () => {
  it('said after writing and when there is nothing to change; the project entry kept', async () => {
    const local = { command: 'npx', args: ['-y', '@engage-mcp/contact'], env: { ENGAGE_API_KEY: 'sk_live_old', ENGAGE_BASE_URL: 'https://old.example.com' } };
    const text = `${JSON.stringify({ projects: { '/work/app': { mcpServers: { 'engage-contact': local } }, '/work/other': { mcpServers: { x: {} } } }, mcpServers: {} }, null, 2)}\n`;
    const { ran, after } = await setupOverConfig(home.dir, 'claude-code', text, KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(NOTE);
    expect(JSON.parse(after).projects).toEqual(JSON.parse(text).projects);
    const again = await setupWithKey(home.dir, 'claude-code', KEY);
    expect(again.stdout).toContain('nothing to change');
    expect(again.stdout).toContain(NOTE);
  });

  it('Cursor: a "projects" key is not Claude Code\'s, nothing said', async () => {
    const text = JSON.stringify({ projects: { '/work/app': { mcpServers: { 'engage-contact': {} } } }, mcpServers: {} });
    const { ran } = await setupOverConfig(home.dir, 'cursor', text, KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toContain('Replaced in some projects');
  });
});
