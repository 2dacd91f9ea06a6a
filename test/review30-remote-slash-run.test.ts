// Review 30: a hostile network client made every request of its own cost the service 250 ms, before
// any key was asked for. Each part names a request's route by its path without trailing slashes
// (exchange.ts pathOf), taken off with `/\/+$/`, which is tried from every slash of a run and reads
// the rest of the run each time: a URL of `/mcp`, 16,000 slashes and a letter (what fits in Node's
// 16 KiB of headers) took 80 ms per look, and a request is looked at three times (the connection
// cap, the handler, the access log). A few such requests a second kept the one event loop busy for
// every tenant (600 of them at once: 150 s). OAuth's resource indicators (normalResource) were
// trimmed the same way. Now the slashes are counted back from the end, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathOf } from '../packages/http/src/exchange.js';
import { normalResource } from '../packages/http/src/oauth/context.js';
import { launchService, stopService, type ServiceProcess } from './service-process.js';

const LONG_RUN = 20_000;
/** Requests of 15,000 slashes sent at once: at 250 ms each before, they held the service for 150 s. */
const FLOOD = 600;

describe('trailing slashes are taken off in one pass', () => {
  it('a path holding a long run of slashes before its last letter', () => {
    const path = `/mcp${'/'.repeat(LONG_RUN)}a`;
    expect(pathOf(`${path}?x=1`)).toBe(path);
    expect(pathOf(`/mcp/contact${'/'.repeat(LONG_RUN)}`)).toBe('/mcp/contact');
    expect(pathOf(`/mcp/contact${'/'.repeat(LONG_RUN)}?${'/'.repeat(10)}`)).toBe('/mcp/contact');
    expect(pathOf('///')).toBe('/');
    expect(pathOf(undefined)).toBe('/');
  });

  it('a resource indicator holding one', () => {
    const resource = `https://mcp.example.com/mcp${'/'.repeat(LONG_RUN)}a`;
    expect(normalResource(`${resource}#part`)).toBe(resource);
    expect(normalResource(`https://mcp.example.com/mcp/contact${'/'.repeat(LONG_RUN)}`)).toBe('https://mcp.example.com/mcp/contact');
  });
});

describe('through the built service', () => {
  let service: ServiceProcess;
  let url: string;
  beforeAll(async () => {
    service = launchService({ ENGAGE_BASE_URL: 'http://127.0.0.1:9' });
    url = await service.url;
  }, 30_000);
  afterAll(async () => {
    if (service) await stopService(service.child);
  });

  it('a run of slashes inside a path is no route; one at its end still names the endpoint', async () => {
    const inside = await fetch(`${url}/mcp${'/'.repeat(15_000)}a`);
    expect(inside.status).toBe(404);
    const atEnd = await fetch(`${url}/mcp/contact${'/'.repeat(15_000)}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    // The route is the endpoint's: refused for want of a key, not as an unknown path.
    expect(atEnd.status).toBe(401);
  });

  it('a flood of such requests is answered, and the service goes on answering', { timeout: 60_000 }, async () => {
    const path = `/mcp${'/'.repeat(15_000)}a`;
    const statuses = await Promise.all(Array.from({ length: FLOOD }, () => fetch(`${url}${path}`).then((answer) => answer.status)));
    expect(new Set(statuses)).toEqual(new Set([404]));
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});
