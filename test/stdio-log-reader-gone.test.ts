// A stdio server whose stderr nobody reads any more (a host that closed its end of the log pipe,
// a wrapper that died): the next log line failed with EPIPE, an uncaught error whose own log line
// failed the same way, over and over, so the server spun a core, never answered `initialize`, and
// did not stop when stdin closed. Found by review32-newcomer. A log nobody reads now costs nothing
// but its lines: the server answers, and stops with its host.
import { expect, it } from 'vitest';
import { startSandbox } from '../packages/sandbox/src/index.js';
import { lineServer } from './helpers/line-server.js';

it('answers and stops when stdin closes, after the reader of its log has gone', { timeout: 30_000 }, async () => {
  const sandbox = await startSandbox();
  const server = lineServer('contact', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_LOG_LEVEL: 'debug' });
  try {
    server.child.stderr.destroy();
    await server.open();
    const listed = await server.request('tools/list', {});
    expect(listed.result.tools.map((tool: { name: string }) => tool.name)).toContain('contact_read');
    const called = await server.request('tools/call', { name: 'contact_read', arguments: { operationId: 'contact.list', limit: 2 } });
    expect(called.result.isError).toBeFalsy();
    server.child.stdin.end();
    await server.exited;
    expect(server.child.exitCode).toBe(0);
  } finally {
    // Before the fix it spun a core for ever: never left behind.
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await sandbox.close();
  }
});
