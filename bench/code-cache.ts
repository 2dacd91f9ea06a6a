// The servers' code cache (scripts/launcher.ts) is written a second after a server's first start;
// a host's first launch makes it, and every later start uses it. The benches give their servers a
// cache folder of their own (XDG_CACHE_HOME) and prime it with one start per server that lives that
// second, so their rounds measure the starts people have after the first. The first start ever
// is measured apart, with NODE_DISABLE_COMPILE_CACHE=1.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { WRITE_AFTER_MS } from '../scripts/launcher.js';

/** A fresh cache folder for one bench run, removed when the bench ends. */
export function benchCacheHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'engage-bench-cache-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** What a host writes first to a stdio server: initialize (2025-06-18), initialized, then tools/list (id 2). */
export function writeOpening(stdin: Writable): void {
  const send = (message: unknown) => stdin.write(`${JSON.stringify(message)}\n`);
  send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
  });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
}

/** Starts each entry once (initialize, tools/list), lets it live until its cache is written, then stops it. */
export async function primeCodeCaches(entries: string[], env: Record<string, string>): Promise<void> {
  for (const entry of entries) {
    const child = spawn(process.execPath, [entry], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'ignore', 'ignore'] });
    writeOpening(child.stdin);
    await new Promise((resolve) => setTimeout(resolve, WRITE_AFTER_MS + 500));
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill();
    });
  }
}
