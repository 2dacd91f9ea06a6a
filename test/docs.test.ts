// The README's tool reference is generated from the catalogs; the tool definitions stay within
// their token budget; no server code writes to stdout.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOMAIN_NAMES } from '@engage-mcp/shared';
import { CONTEXT_BUDGET_CHARS, README, listAllTools, measureContext, renderToolReference, replaceReference } from '../scripts/docs.js';

describe('docs and budgets', () => {
  it('the README tool reference is current (run npm run docs)', async () => {
    const readme = await readFile(README, 'utf8');
    expect(replaceReference(readme, await renderToolReference())).toBe(readme);
  });

  it('the fourteen tool definitions and the seven instructions fit the ~4,500 token budget', async () => {
    const { tools, instructions } = await listAllTools();
    expect(tools).toHaveLength(14);
    expect(instructions.filter((text) => text.length > 0)).toHaveLength(7);
    const { definitionChars, instructionChars } = await measureContext();
    expect(definitionChars + instructionChars).toBeLessThanOrEqual(CONTEXT_BUDGET_CHARS);
  });

  it('server code never writes to stdout but through the transport', async () => {
    const roots = ['shared/src', ...DOMAIN_NAMES.map((domain) => `packages/${domain}/src`)];
    for (const root of roots) {
      for (const file of await readdir(root, { recursive: true })) {
        if (!file.endsWith('.ts')) continue;
        const source = await readFile(join(root, file), 'utf8');
        expect(source, `${root}/${file}`).not.toMatch(/console\.(log|info)\(/);
        // The SDK's stdio transport is the only writer to stdout.
        expect(source, `${root}/${file}`).not.toMatch(/process\.stdout\.write/);
      }
    }
  });
});
