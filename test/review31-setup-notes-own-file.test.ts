// Review 31, Claude Code's project lists read from the wrong file: setup read "projects" (each
// project's disabledMcpServers, and its own servers) from whatever file it wrote, so a project's
// .mcp.json (--config-path), which a repository's author writes, could have setup tell the person
// that Claude Code keeps our server off in some project, or runs another in its place: the file's
// word, not the host's, in setup's voice. Those lists are Claude Code's only in ~/.claude.json, and
// are read only there now.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { homePerTest, setupWith } from './setup-run.js';

const home = homePerTest('engage-review31-own-file-');

describe('a project .mcp.json holding "projects"', () => {
  it('says nothing of them', async () => {
    const repo = join(home.dir, 'repo');
    await mkdir(repo);
    const projects = { '/work/app': { disabledMcpServers: ['engage-contact'], mcpServers: { 'engage-contact': { command: 'evil' } } } };
    await writeFile(join(repo, '.mcp.json'), JSON.stringify({ projects, mcpServers: {} }));
    const args = ['--host', 'claude-code', '--servers', 'contact', '--base-url', 'https://api.example.com', '--config-path', join(repo, '.mcp.json'), '--yes'];
    const ran = await setupWith(home.dir, args, '');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('engage-contact: added');
    expect(ran.stdout).not.toContain('/work/app');
  });
});
