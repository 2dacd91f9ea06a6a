// Review 29, setup's in-place JSON edit against unusual configs: VS Code's inputs are a list, so
// two inputs of our id (engage-api-key) are not a duplicate key and were not refused; setup set the
// FIRST, while VS Code asks with the LAST of an id (its resolver takes
// inputs.filter(id).pop()). With the person's last one lacking "password": true, VS Code showed
// the tenant key as it was typed, and setup said the input was set, then "nothing to change".
// Setup now sets the input VS Code reads: the last of that id; the person's others are kept.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { VSCODE_KEY_INPUT } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review29-splice-input-');

const theirFirst = '{ "id": "engage-api-key", "type": "promptString", "description": "old one", "password": true }';
const theirLast = '{ "id": "engage-api-key", "type": "promptString", "description": "Engage key" }';
const text = `{\n  "servers": {},\n  "inputs": [\n    ${theirFirst},\n    { "id": "other", "type": "promptString", "description": "x" },\n    ${theirLast}\n  ]\n}\n`;

/** The input VS Code asks with for `${input:id}`: the last of that id. */
const readByVsCode = (config: { inputs: { id: string }[] }, id: string) => config.inputs.filter((input) => input.id === id).pop();

describe('VS Code: two inputs of our id', () => {
  it('the one VS Code reads (the last) is set, with password; the first kept byte for byte; a second run changes nothing', async () => {
    const { path, ran: first, after } = await setupOverConfig(home.dir, 'vscode', text, 'unused: VS Code asks for the key');
    expect(first.code, first.stderr).toBe(0);
    const config = JSON.parse(after);
    expect(readByVsCode(config, VSCODE_KEY_INPUT.id)).toEqual(VSCODE_KEY_INPUT);
    expect(config.servers['engage-contact'].env.ENGAGE_API_KEY).toBe(`\${input:${VSCODE_KEY_INPUT.id}}`);
    expect(after).toContain(theirFirst);
    const second = await setupWithKey(home.dir, 'vscode', 'unused');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('nothing to change');
    expect(await readFile(path, 'utf8')).toBe(after);
  });
});
