// Before the tests: the remote-mode tests run a real redis-server (plain and TLS), and export an
// audit record with redis-cli as the README does. Where either is missing and this is a Debian
// machine run as root (this project's machines and CI), Debian's package is installed; anywhere
// else, or where a path set for the tests names a missing file, the tests stop here, at once, with
// what to install.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const TOOLS = [
  { name: 'redis-server', setting: 'ENGAGE_TEST_REDIS_SERVER', debian: 'redis-server', why: 'the remote-mode tests' },
  { name: 'redis-cli', setting: 'ENGAGE_TEST_REDIS_CLI', debian: 'redis-tools', why: "the audit record's export" },
];
const missing = TOOLS.map((tool) => ({ ...tool, path: process.env[tool.setting] ?? `/usr/bin/${tool.name}` })).filter((tool) => !existsSync(tool.path));
if (missing.length > 0) {
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && existsSync('/etc/debian_version');
  for (const tool of missing) {
    if (!canInstall || process.env[tool.setting] !== undefined) {
      const how = `install Redis 6.2 or later with TLS (Debian: apt-get install ${tool.debian}) or set ${tool.setting} to its ${tool.name}`;
      process.stderr.write(`npm test needs ${tool.name} at ${tool.path} for ${tool.why}: ${how}.\n`);
      process.exit(1);
    }
  }
  const packages = missing.map((tool) => tool.debian);
  const are = missing.length === 1 ? 'is' : 'are';
  process.stderr.write(
    `${missing.map((tool) => tool.path).join(' and ')} ${are} missing: installing Debian's ${packages.join(' and ')} for the remote-mode tests.\n`,
  );
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { stdio: ['ignore', 'inherit', 'inherit'], env });
}
