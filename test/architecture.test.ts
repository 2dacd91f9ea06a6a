// The house's rules, read from the code's own imports: the core's rooms import only downward,
// only mcp/ talks to the SDK at run time, there is no import circle, and no package reaches into
// another package's src/.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOMS = ['safe', 'model', 'upstream', 'call', 'mcp'] as const;
const CORE = 'shared/src';

interface Import {
  from: string;
  specifier: string;
  typeOnly: boolean;
}

function sources(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(root, file));
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: Import[] = [];
  for (const match of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)';/gms)) {
    found.push({ from: file, specifier: match[3] as string, typeOnly: match[2] !== undefined || /^(import|export) type /.test(match[0]) });
  }
  for (const match of text.matchAll(/import\('([^']+)'\)/g)) found.push({ from: file, specifier: match[1] as string, typeOnly: false });
  return found;
}

const roomOf = (file: string) => relative(CORE, file).split('/')[0] as string;
const resolveLocal = (from: string, specifier: string) => normalize(join(dirname(from), specifier)).replace(/\.js$/, '.ts');

describe('the rooms of the core', () => {
  const files = sources(CORE).filter((file) => ROOMS.includes(roomOf(file) as never));

  it('every source file of the core lives in a room, but the two front doors', () => {
    const outside = sources(CORE).filter((file) => !ROOMS.includes(roomOf(file) as never));
    expect(outside.map((file) => relative(CORE, file)).sort()).toEqual(['index.ts', 'runtime.ts']);
  });

  it('import only from their own room or the rooms below', () => {
    const upward = files.flatMap((file) =>
      importsOf(file)
        .filter((one) => one.specifier.startsWith('.'))
        .map((one) => ({ ...one, to: resolveLocal(file, one.specifier) }))
        .filter((one) => ROOMS.indexOf(roomOf(one.to) as never) > ROOMS.indexOf(roomOf(file) as never))
        .map((one) => `${one.from} → ${one.to}`),
    );
    expect(upward).toEqual([]);
  });

  it('only mcp/ uses the SDK at run time; the rest may name its types', () => {
    const runtime = files
      .filter((file) => roomOf(file) !== 'mcp')
      .flatMap((file) => importsOf(file).filter((one) => one.specifier.startsWith('@modelcontextprotocol/') && !one.typeOnly))
      .map((one) => `${one.from}: ${one.specifier}`);
    expect(runtime).toEqual([]);
  });

  it('model/types.ts imports nothing at run time', () => {
    expect(importsOf(join(CORE, 'model/types.ts')).filter((one) => !one.typeOnly)).toEqual([]);
  });

  it('has no import circle', () => {
    const edges = new Map(
      sources(CORE).map((file) => [
        file,
        importsOf(file)
          .filter((one) => one.specifier.startsWith('.'))
          .map((one) => resolveLocal(file, one.specifier)),
      ]),
    );
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of edges.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});

describe('packages', () => {
  it('never reach into another package’s src/ (they import each other by name, through its exports)', () => {
    const roots = ['shared/src', ...readdirSync('packages').map((name) => `packages/${name}/src`)].filter((root) => {
      try {
        return readdirSync(root).length > 0;
      } catch {
        return false;
      }
    });
    const reaching = roots.flatMap((root) =>
      sources(root).flatMap((file) =>
        importsOf(file)
          .filter((one) => one.specifier.startsWith('.'))
          .filter((one) => !resolveLocal(file, one.specifier).startsWith(`${root}/`) && !resolveLocal(file, one.specifier).startsWith(dirname(root)))
          .map((one) => `${file}: ${one.specifier}`),
      ),
    );
    expect(reaching).toEqual([]);
  });
});
