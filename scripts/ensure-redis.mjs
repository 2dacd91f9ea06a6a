// Before the tests: the remote-mode tests run a real redis-server (plain and TLS). Where it is
// missing and this is a Debian machine run as root (this project's machines and CI), Debian's
// package is installed; anywhere else the tests stop here, at once, with what to install.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const path = process.env.ENGAGE_TEST_REDIS_SERVER ?? '/usr/bin/redis-server';
if (!existsSync(path)) {
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && existsSync('/etc/debian_version');
  if (!canInstall || process.env.ENGAGE_TEST_REDIS_SERVER !== undefined) {
    const how = 'install Redis 6.2 or later with TLS (Debian: apt-get install redis-server) or set ENGAGE_TEST_REDIS_SERVER to its redis-server';
    process.stderr.write(`npm test needs redis-server at ${path} for the remote-mode tests: ${how}.\n`);
    process.exit(1);
  }
  process.stderr.write(`redis-server is missing at ${path}: installing Debian's redis-server package for the remote-mode tests.\n`);
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'redis-server'], { stdio: ['ignore', 'inherit', 'inherit'], env });
}
