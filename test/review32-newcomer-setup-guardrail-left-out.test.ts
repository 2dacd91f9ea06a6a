// A guardrail flag left out on a later run keeps what an earlier run wrote (README, Install), but
// setup's --help said a flag left out gives "the server's default", and an empty value was refused
// with "leave the flag out for the server's default": a person who wanted the cap gone did so, and
// it stayed. Both now say what happens, and how a setting is removed.
import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWith, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-guard-left-out-');
const KEY = 'sk_live_5b1d9e3a7c4f2e8b6a0d';
const FLAGS = ['--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'];

const capOf = async () => {
  const config = JSON.parse(await readFile(configPathIn(home.dir, 'cursor'), 'utf8'));
  return config.mcpServers['engage-contact'].env.ENGAGE_CAP_MESSAGES_PER_DAY as string | undefined;
};

it('--help says a flag left out keeps the earlier value, as a run without it does', async () => {
  const help = await setupWith(home.dir, ['--help'], '');
  expect(help.stdout).toContain('A flag left out keeps what an earlier\nrun wrote');
  expect(help.stdout).not.toContain("left out: the server's default");

  expect((await setupWith(home.dir, [...FLAGS, '--cap-messages-per-day', '100'], `${KEY}\n`)).code).toBe(0);
  expect((await setupWithKey(home.dir, 'cursor', KEY)).code).toBe(0);
  expect(await capOf()).toBe('100');
});

it('an empty value is refused saying the earlier value stays, and how to remove it', async () => {
  expect((await setupWith(home.dir, [...FLAGS, '--cap-messages-per-day', '100'], `${KEY}\n`)).code).toBe(0);
  const emptied = await setupWith(home.dir, [...FLAGS, '--cap-messages-per-day', ''], `${KEY}\n`);
  expect(emptied.code).toBe(2);
  expect(emptied.stderr).toContain('Left out, the flag keeps what an earlier run wrote');
  expect(emptied.stderr).toContain("to remove ENGAGE_CAP_MESSAGES_PER_DAY, delete it from the entries' env");
  expect(await capOf()).toBe('100');
});
