// The licences file of each package (review35-packaging) listed the packages esbuild's metafile
// saw, but the MCP SDK's own files had inlined others before we bundle them: @cfworker/json-schema
// (the validator every server uses) and content-type, both MIT, whose notices must travel with
// every copy, went out with none. The source maps of what we build name every file whose code is
// in it, through the SDK's maps too. After `npm run build`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../scripts/catalogs.js';
import { ROOT } from '../scripts/distribution.js';

const NOTICES = 'third-party-licenses.LEGAL.txt';

/** The npm packages the source maps of a dist/ name: every package whose code is in its files. */
function packagesInMaps(dist: string): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(dist).filter((name) => name.endsWith('.map'))) {
    const { sources } = JSON.parse(readFileSync(join(dist, file), 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const at = source.lastIndexOf('node_modules/');
      if (at < 0) continue;
      const [first = '', second = ''] = source.slice(at + 'node_modules/'.length).split('/');
      names.add(first.startsWith('@') ? `${first}/${second}` : first);
    }
  }
  return names;
}

/** The packages a licences file lists, by name. */
function listed(text: string): Set<string> {
  return new Set([...text.matchAll(/^- ((?:@[^/\s]+\/)?[^@\s]+)@\S+ \(/gm)].map((match) => match[1] as string));
}

const scopeOf = (name: string) => (name.startsWith('@') ? name.split('/')[0] : undefined);

describe("each package's licences file lists every package whose code it ships", () => {
  const dists = [...CATALOGS.map(({ name }) => `packages/${name}/dist`), 'packages/http/dist'];

  it.each(dists)('%s', (dist) => {
    const dir = join(ROOT, dist);
    expect(existsSync(join(dir, NOTICES)), `${dist} is built`).toBe(true);
    const names = listed(readFileSync(join(dir, NOTICES), 'utf8'));
    // The SDK's internal package of its own repository is the SDK's code, under the SDK's licence.
    const scopes = new Set<string | undefined>([...names].map(scopeOf).filter((scope) => scope !== undefined));
    const missing = [...packagesInMaps(dir)].filter((name) => !names.has(name) && !scopes.has(scopeOf(name)));
    expect(missing).toEqual([]);
  });

  it("with the text of the inlined packages' licences", () => {
    const text = readFileSync(join(ROOT, 'packages/contact/dist', NOTICES), 'utf8');
    expect(text).toContain('- @cfworker/json-schema@4.1.1 (MIT)');
    expect(text).toContain('@cfworker/json-schema ships no licence file; its package.json says: MIT, by Jeremy Danyow');
    const contentType = join(ROOT, 'node_modules/content-type');
    const { version } = JSON.parse(readFileSync(join(contentType, 'package.json'), 'utf8')) as { version: string };
    expect(text).toContain(`- content-type@${version} (MIT)`);
    expect(text).toContain(readFileSync(join(contentType, 'LICENSE'), 'utf8').trim());
  });
});
