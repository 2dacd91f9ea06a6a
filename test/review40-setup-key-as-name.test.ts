// Review 40, 738750e kept a key given where a word or --key-env's name goes out of the refusal, but
// not one given where a flag, a host or a server goes: `--<key>` (pasted after the dashes),
// `--host "$KEY"` and `--servers "$KEY"` (an answer shifted by one in a script) printed the key
// back, into a terminal or a CI log, the servers' one lowercased. Now a word that does not read as
// a name (short, of letters, digits, dashes) is not repeated; a name is, as before.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupWith } from './setup-run.js';

const KEY = 'eng_live_40Kee9Kee9Kee9Kee9Kee9Kee9';
let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review40-keyname-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('a key given where a flag, a host or a server goes is not printed', () => {
  it.each([
    [[`--${KEY}`], "a flag setup does not know was given (not shown: it may be the key, pasted as --<key>). The API key is never taken as a flag's value"],
    [['--host', KEY], 'unknown host one not shown (it may be the key): one of claude-desktop'],
    [['--host', 'cursor', '--servers', KEY], 'unknown server one not shown (it may be the key): choose from'],
    [['--host', 'cursor', '--servers', `contact,${KEY}`], 'unknown server one not shown (it may be the key): choose from'],
  ])('%j', async (args, message) => {
    const ran = await setupWith(home, [...args, '--print'], '');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(message);
    expect(ran.stderr.toLowerCase()).not.toContain(KEY.toLowerCase());
    expect(ran.stderr.toLowerCase()).not.toContain(KEY.slice(9).toLowerCase());
  });

  it('a name is repeated as before', async () => {
    const ran = await setupWith(home, ['--host', 'cursor', '--servers', 'contakt,mail', '--print'], '');
    expect(ran.stderr).toContain('unknown server contakt, mail: choose from');
  });

  it('a host number out of range is repeated as before', async () => {
    const ran = await setupWith(home, ['--host', '9', '--print'], '');
    expect(ran.stderr).toContain('unknown host "9": one of claude-desktop');
  });
});
