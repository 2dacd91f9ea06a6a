// The host's own folder missing until setup made it: the host has not run as this user here, or the
// person uses another program than the one chosen (VS Code Insiders keeps its settings in "Code -
// Insiders", VSCodium in "VSCodium"), and the servers written would never show. Setup says so,
// naming such a program's file where one is there, to write with --config-path.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Host } from './hosts.js';
import { shellWord, shown } from './shown.js';

/** Programs built from VS Code, each with its own folder beside Code's: VS Code's user mcp.json is not theirs. */
const VSCODE_VARIANTS = ['Code - Insiders', 'VSCodium', 'VSCodium - Insiders', 'Code - OSS'];

/**
 * Read before writing `path`, the host's usual file: a line to say after, if the folder the host
 * makes for itself is not there. Claude Code's file is in the home folder itself; ~/.claude is the
 * folder it makes.
 */
export function missingFolderNote(host: Host, path: string): string | undefined {
  const folder = host.id === 'claude-code' ? join(dirname(path), '.claude') : dirname(path);
  if (existsSync(folder)) return undefined;
  const note =
    `There was no ${shown(folder)} before this run: ${host.name} has not been started as this user on this machine, or keeps its ` +
    `settings elsewhere. It reads ${shown(path)} once it runs as this user.`;
  if (host.id !== 'vscode') return note;
  // <config>/Code/User/mcp.json: the variants' folders are beside Code.
  const config = dirname(dirname(folder));
  const variants = VSCODE_VARIANTS.filter((name) => existsSync(join(config, name, 'User')));
  const instead = variants.map((name) => {
    const file = join(config, name, 'User', 'mcp.json');
    const word = shellWord(file);
    return `${name}: run again with ${word ? `--config-path ${word}` : `--config-path naming ${shown(file)}`}`;
  });
  return instead.length === 0 ? note : `${note} Another build of VS Code keeps its settings here (${instead.join('; ')}).`;
}
