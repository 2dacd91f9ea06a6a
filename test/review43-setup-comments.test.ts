// Review 43, a JSON config with comments or trailing commas was refused for every host ("comments
// and trailing commas are not JSON either"), though VS Code reads its mcp.json with its JSONC parser
// (comments and trailing commas allowed; VS Code writes comments there itself) and Gemini CLI its
// settings.json with comments stripped (strip-json-comments: trailing commas stay, and JSON.parse
// refuses them). Now setup writes into such a file for those hosts, every comment kept where it
// was, writing nothing the host cannot read: Gemini CLI's trailing comma is refused, and so is a
// commented file for a host whose reader is plain JSON (Cursor, Claude Code, Claude Desktop).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWith, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review43-comments-');
const KEY = 'k-comments-1234567890';
const BASE_URL = 'https://api.example.com';

/** The text with these comments and every trailing comma taken out: plain JSON, to compare (the test's own, not setup's). */
function withoutComments(text: string, comments: string[]): unknown {
  const uncommented = comments.reduce((rest, comment) => rest.replace(comment, ''), text);
  return JSON.parse(uncommented.replace(/,(\s*[}\]])/g, '$1'));
}

/** Each comment is in `text`, in the order given. */
function expectInOrder(text: string, comments: string[]): void {
  const at = comments.map((comment) => text.indexOf(comment));
  expect(at.every((index) => index >= 0)).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
}

async function writeConfig(host: 'vscode' | 'gemini' | 'cursor', text: string): Promise<string> {
  const path = configPathIn(home.dir, host);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  return path;
}

const vscodeRun = (baseUrl = BASE_URL) => setupWith(home.dir, ['--host', 'vscode', '--servers', 'contact', '--base-url', baseUrl, '--yes'], '');

const ourVscodeEntry = () => ({
  type: 'stdio',
  command: 'npx',
  args: ['--prefix', home.dir, '-y', '@engage-mcp/contact'],
  env: { ENGAGE_API_KEY: '${input:engage-api-key}', ENGAGE_BASE_URL: BASE_URL },
});

const KEY_INPUT = { type: 'promptString', id: 'engage-api-key', description: 'Engage tenant API key (tenant console, API key settings)', password: true };

describe('VS Code: comments and trailing commas, as its JSONC reader takes them', () => {
  const comments = ['// My MCP servers', '/* the one I use every day */', '// no args', '// inputs come later'];
  const ORIGINAL = [
    '// My MCP servers',
    '{',
    '\t"servers": {',
    '\t\t/* the one I use every day */',
    '\t\t"mine": {',
    '\t\t\t"command": "my-server", // no args',
    '\t\t},',
    '\t},',
    '\t// inputs come later',
    '}',
    '',
  ].join('\n');

  it('adds the entry and the key input after the person’s own, every comment and trailing comma kept', async () => {
    const path = await writeConfig('vscode', ORIGINAL);
    const ran = await vscodeRun();
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const after = await readFile(path, 'utf8');
    expectInOrder(after, comments);
    expect(after.startsWith(ORIGINAL.slice(0, ORIGINAL.indexOf('\t\t},')))).toBe(true);
    expect(after).toContain('"command": "my-server", // no args\n\t\t},\n\t\t"engage-contact": {\n\t\t\t"type": "stdio",');
    expect(after.endsWith('\t],\n\t// inputs come later\n}\n')).toBe(true);
    expect(withoutComments(after, comments)).toEqual({ servers: { mine: { command: 'my-server' }, 'engage-contact': ourVscodeEntry() }, inputs: [KEY_INPUT] });
  });

  it('runs again with nothing to change, a comment in its own entry kept; refuses to rewrite that entry over the comment', async () => {
    const path = await writeConfig('vscode', ORIGINAL);
    expect((await vscodeRun()).code).toBe(0);
    const commented = (await readFile(path, 'utf8')).replace('"type": "stdio",', '"type": "stdio", // mine now');
    await writeFile(path, commented);
    const again = await vscodeRun();
    expect(again.stderr).toBe('');
    expect(again.stdout).toContain('nothing to change');
    const moved = await vscodeRun('https://api2.example.com');
    expect(moved.code).toBe(1);
    expect(moved.stderr).toContain(`${path} has a comment or a trailing comma in its "engage-contact" entry`);
    expect(moved.stderr).toContain('it would be lost; nothing was changed');
    expect(await readFile(path, 'utf8')).toBe(commented);
  });

  it('a file of comments alone, or an empty object holding one: kept, the servers after it', async () => {
    const path = await writeConfig('vscode', '{\n\t// nothing yet\n}\n');
    expect((await vscodeRun()).code).toBe(0);
    const after = await readFile(path, 'utf8');
    expect(after.startsWith('{\n\t// nothing yet\n\t"servers": {\n')).toBe(true);
    expect(withoutComments(after, ['// nothing yet'])).toEqual({ servers: { 'engage-contact': ourVscodeEntry() }, inputs: [KEY_INPUT] });

    await writeFile(path, '// set up later\n');
    expect((await vscodeRun()).code).toBe(0);
    const fresh = await readFile(path, 'utf8');
    expect(fresh.startsWith('// set up later\n{\n')).toBe(true);
    expect(withoutComments(fresh, ['// set up later'])).toEqual({ servers: { 'engage-contact': ourVscodeEntry() }, inputs: [KEY_INPUT] });
  });
});

describe('Gemini CLI: comments, which it strips; not trailing commas, which it refuses', () => {
  it('adds the entry, the comments kept', async () => {
    const comments = ['// my theme', '/* dark one */'];
    const path = await writeConfig('gemini', '{\n  // my theme\n  "theme": "GitHub", /* dark one */\n  "mcpServers": {}\n}\n');
    const ran = await setupWithKey(home.dir, 'gemini', KEY);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const after = await readFile(path, 'utf8');
    expect(after.startsWith('{\n  // my theme\n  "theme": "GitHub", /* dark one */\n  "mcpServers": {\n    "engage-contact": {')).toBe(true);
    expect(withoutComments(after, comments)).toEqual({
      theme: 'GitHub',
      mcpServers: {
        'engage-contact': {
          command: 'npx',
          args: ['--prefix', home.dir, '-y', '@engage-mcp/contact'],
          env: { ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: BASE_URL },
        },
      },
    });
  });

  it('refuses a trailing comma, saying Gemini CLI would not read it, and leaves the file', async () => {
    const original = '{\n  // my theme\n  "theme": "GitHub",\n}\n';
    const path = await writeConfig('gemini', original);
    const ran = await setupWithKey(home.dir, 'gemini', KEY);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} is not valid JSON at line 4, column 1 (Gemini CLI takes comments in it, but not trailing commas)`);
    expect(await readFile(path, 'utf8')).toBe(original);
  });
});

describe('a host that reads plain JSON', () => {
  it('Cursor: a commented file is refused as before, saying why, and left', async () => {
    const original = '{\n  // mine\n  "mcpServers": {}\n}\n';
    const path = await writeConfig('cursor', original);
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} is not valid JSON at line 2, column 3 (Cursor reads it as plain JSON: comments and trailing commas are not JSON)`);
    expect(await readFile(path, 'utf8')).toBe(original);
  });
});
