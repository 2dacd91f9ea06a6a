// A copy of one of our packages installed in the folder the entries give npx as --prefix (the home
// folder: `npm install @engage-mcp/contact` in a new terminal, which opens there). npx then finds
// the package present and fetches nothing, but looks for its command only in the node_modules/.bin
// folders above the folder the host starts it in, and on PATH, never in the prefix's (npm 10 and
// 11 run the command there, not in --prefix). Started outside the home folder (Claude Desktop on
// macOS starts servers in /), the server does not start ("engage-mcp-contact: not found"); in a
// project under it that holds its own engage-mcp-contact, that one runs, which is what --prefix is
// written against. Setup cannot write an entry that works with such a copy: it says so.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerEntry } from './hosts.js';

/** The package an entry runs with `npx --prefix DIR -y PACKAGE`, and DIR; undefined for other commands. */
function prefixAndPackage(entry: ServerEntry): { prefix: string; packageName: string } | undefined {
  const args = entry.command === 'npx' ? entry.args : entry.args.slice(entry.args.indexOf('npx') + 1);
  if (args[0] !== '--prefix' || args[1] === undefined || args[2] !== '-y' || args[3] === undefined) return undefined;
  return { prefix: args[1], packageName: args[3] };
}

/** One line per entry whose package is installed in its npx prefix, with what to do about it. */
export function prefixCopyNotes(entries: Record<string, ServerEntry>): string[] {
  return Object.entries(entries).flatMap(([name, entry]) => {
    const found = prefixAndPackage(entry);
    if (!found) return [];
    const copy = join(found.prefix, 'node_modules', ...found.packageName.split('/'));
    if (!existsSync(join(copy, 'package.json'))) return [];
    return [
      `${name}: ${found.packageName} is installed in ${copy}. npx then runs no copy of its own, and the host finds the server's command ` +
        `only under the folder it starts in, so the server does not start outside ${found.prefix} (or a project's own copy runs). ` +
        `Remove it (npm uninstall ${found.packageName}, run in ${found.prefix}): the host's npx fetches the package itself.`,
    ];
  });
}
