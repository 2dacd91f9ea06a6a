// `--servers "$LIST"` in a script whose LIST was empty (or left as commas) added all seven servers,
// as the terminal's empty answer does for its shown default [all]: a flag that names no server is now
// refused, and nothing is written. At the terminal, an empty answer still means all.
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWith } from './setup-run.js';

const home = homePerTest('engage-servers-empty-');

it.each(['', ' ', ',', ' , '])('--servers %j is refused and nothing is written', async (servers) => {
  const flags = ['--host', 'cursor', '--servers', servers, '--base-url', 'https://api.example.com', '--key-stdin', '--yes'];
  const ran = await setupWith(home.dir, flags, 'sk_live_7d2a9c4e1b8f3a6d0c5e\n');
  expect(ran.code).toBe(2);
  expect(ran.stderr).toContain(`${JSON.stringify(servers)} names no server: give all, or a comma list of contact, campaign`);
  expect(existsSync(configPathIn(home.dir, 'cursor'))).toBe(false);
});

it('--servers all still adds all seven', async () => {
  const flags = ['--host', 'cursor', '--servers', 'all', '--base-url', 'https://api.example.com', '--print'];
  const ran = await setupWith(home.dir, flags, '');
  expect(ran.code, ran.stderr).toBe(0);
  expect(Object.keys(JSON.parse(ran.stdout).mcpServers)).toHaveLength(7);
});
