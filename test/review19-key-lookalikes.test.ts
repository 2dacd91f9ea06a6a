// Review 19: review17 refuses a key that is still the README's placeholder or a reference the host
// did not expand. But a key is any printable ASCII (config.ts isPrintableAsciiKey: `<`, `>`, `$`,
// `{`, `}` included), and the checks looked for `<…>` or `${…}` anywhere in it: a real key that
// happens to hold them (eng_live_…<…>…, eng_live_…${…}…) stopped the server with "still a
// placeholder from the README" or "a reference to a variable that the host did not fill in", and
// setup refused it the same way; the person could not use their key at all. Inside a key that
// would otherwise be taken, only a whole-value placeholder or reference is one now; a value the
// key checks refuse anyway (blanks, an ellipsis) is still named a placeholder.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@engage-mcp/shared';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STARTABLE_ENV, startStderr } from './server-stderr.js';
import { configPathIn, setupWithKey } from './setup-run.js';

const LOOKALIKES = ['eng_live_9f<2c4e>7a1b3d5f8a6c0e2b', 'eng_live_9f${2c4e}7a1b3d5f8a6c0e2b', 'eng_live_<9f2c4e7a1b3d5f8a6c0e2b>'];

/** The built contact server's stderr up to its first line. */
const startLine = (env: Record<string, string>) => startStderr({ ENGAGE_BASE_URL: STARTABLE_ENV.ENGAGE_BASE_URL, ENGAGE_LOG_LEVEL: 'info', ...env });

describe('a real key holding <, >, $, { or } is a key', () => {
  it.each(LOOKALIKES)('ENGAGE_API_KEY=%s: the server starts', async (key) => {
    const stderr = await startLine({ ENGAGE_API_KEY: key });
    expect(stderr).toMatch(/ready: /);
  });

  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'engage-review19-lookalike-'));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  // Claude Desktop expands nothing in its config; the hosts that expand `${…}` refuse such a key
  // instead (review39-setup: test/review39-setup-key-expanded.test.ts).
  it.each(LOOKALIKES)('setup takes %s and writes it', async (key) => {
    const ran = await setupWithKey(home, 'claude-desktop', key);
    expect(ran.code, ran.stderr).toBe(0);
    const written = JSON.parse(await readFile(configPathIn(home, 'claude-desktop'), 'utf8'));
    expect(written.mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe(key);
  });
});

describe('placeholders and references are still named', () => {
  it.each([
    ['<your tenant API key>', /still a placeholder/],
    ['<key>', /still a placeholder/],
    ['…', /still a placeholder/],
    ['eng_live_<paste it here>', /still a placeholder/],
    ['${ENGAGE_API_KEY}', /reference to a variable/],
    ['${env:ENGAGE_API_KEY}', /reference to a variable/],
    ['$ENGAGE_API_KEY', /reference to a variable/],
    ['${user_config.api_key}', /reference to a variable/],
  ])('ENGAGE_API_KEY=%s', (value, expected) => {
    const result = loadConfig({ ENGAGE_API_KEY: value, ENGAGE_BASE_URL: 'https://api.example.com' }, 'contact', []);
    expect(result.ok ? [] : result.problems.join(' ')).toMatch(expected);
  });
});
