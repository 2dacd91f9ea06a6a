// Review 16: a server whose environment lacks a setting answered every call with "Fix the
// server's environment in the host's MCP configuration and restart it", addressed to a model that
// can do neither, and without saying retrying will not help. It now says so, and to tell the user.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('a server that is not configured says who fixes it', () => {
  it.each(['v1', 'v2-modern'] as const)('%s: no ENGAGE_BASE_URL: nothing sent, retrying will not help, tell the user what to set', async (kind) => {
    const server = await serve('contact.list', { kind, env: { ENGAGE_BASE_URL: undefined } });
    const result = await server.call('contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^The contact server is not configured, so nothing was sent: ENGAGE_BASE_URL is not set/);
    expect(textOf(result)).toMatch(
      /Retrying will not help: tell the user, who fixes the server's environment in the host's MCP configuration and restarts it\.$/,
    );
    expect(sandbox.requests()).toHaveLength(0);
  });
});
