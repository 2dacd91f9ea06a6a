// What a built server loads: only what a call needs. Read from the bundles' source maps (the
// modules each bundle holds), after `npm run build`.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

/** Every source module in a domain's built server (its start, what it loads later, and its catalog). */
function bundledModules(domain: string, only?: string): string[] {
  const dist = join(root, 'packages', domain, 'dist');
  const maps = readdirSync(dist).filter((name) => name.endsWith('.map') && (only === undefined || name === `${only}.map`));
  return maps.flatMap((map) => (JSON.parse(readFileSync(join(dist, map), 'utf8')) as { sources: string[] }).sources);
}

describe('a built server', () => {
  it('carries undici’s Pool and request API, not the rest of undici (fetch, WebSocket, caches, mocks)', () => {
    const modules = bundledModules('contact');
    expect(modules.some((source) => source.includes('undici/lib/dispatcher/pool.js'))).toBe(true);
    // (A Client needs parts of undici's fetch body code; fetch itself, and the rest, it does not.)
    const unused =
      /undici\/(index\.js|lib\/mock\/|lib\/cache\/|lib\/web\/(websocket|eventsource|cache|cookies)\/|lib\/web\/fetch\/index\.js|lib\/dispatcher\/(agent|proxy-agent)\.js)/;
    expect(modules.filter((source) => unused.test(source))).toEqual([]);
  });

  it('starts with the SDK and the core only: the catalog, undici and the views are loaded when first needed', () => {
    const start = bundledModules('contact', 'server.cjs');
    expect(start.some((source) => source.includes('@modelcontextprotocol/server/'))).toBe(true);
    expect(start.filter((source) => /node_modules\/undici\/|\/operations\.ts$|packages\/apps\/|stream-list\.ts$/.test(source))).toEqual([]);
  });

  it('starts without node:http (about 2.5 MB of resident memory): undici loads it on the first call', () => {
    const requires = (file: string) => readFileSync(join(root, 'packages/contact/dist', file), 'utf8').match(/require\("(node:)?[a-z_/]+"\)/g) ?? [];
    expect(requires('server.cjs').filter((call) => /"(node:)?(http|https|net|tls)"/.test(call))).toEqual([]);
    expect(requires('undici-pool.cjs')).toContain('require("node:http")');
  });

  it('carries zod’s English messages only, not its other locales', () => {
    for (const domain of ['contact', 'campaign']) {
      const locales = bundledModules(domain).filter((source) => /zod\/v4\/locales\//.test(source));
      expect(locales.map((source) => source.replace(/.*zod\/v4\/locales\//, ''))).toEqual(expect.arrayContaining(['en.js']));
      expect(locales.filter((source) => !source.endsWith('/en.js'))).toEqual([]);
    }
  });
});
