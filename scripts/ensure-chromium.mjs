// Before the tests: the MCP Apps browser tests drive the system's Chromium (never a downloaded
// one). Where it is missing and this is a Debian machine run as root (this project's machines and
// CI), Debian's package is installed; anywhere else the tests stop here with what to do. A
// CHROMIUM_PATH that names a missing file stops them too: Debian's package would not put it there.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(path)) {
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && existsSync('/etc/debian_version');
  if (!canInstall || process.env.CHROMIUM_PATH !== undefined) {
    process.stderr.write(
      `npm test needs Chromium at ${path} for the MCP Apps browser tests: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH to its binary.\n`,
    );
    process.exit(1);
  }
  process.stderr.write(`Chromium is missing at ${path}: installing Debian's chromium package for the browser tests.\n`);
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'] });
  execFileSync('apt-get', ['install', '-y', 'chromium'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}
