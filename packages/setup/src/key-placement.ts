// Where the live API key may be written. The rule: only into the host's own per-user config
// file (the one written without --config-path), and only when that file is outside every git
// work tree. Any other file may be a project's, checked in or shared (.mcp.json,
// .cursor/mcp.json, .codex/config.toml, a dotfiles repository): there the entries name an
// environment variable in the host's own syntax (Codex: passes it on by name), and a host that has
// neither is refused rather than given the key.
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigRefused } from './config-error.js';
import type { Host } from './hosts.js';

export const KEY_VARIABLE = 'ENGAGE_API_KEY';

export type KeyPlacement = { kind: 'key' } | { kind: 'reference'; reference: string; reason: string } | { kind: 'forward'; reason: string };

export async function keyPlacement(host: Host, path: string, usualPath: string): Promise<KeyPlacement> {
  const reason = await whyShared(path, usualPath);
  if (reason === undefined) return { kind: 'key' };
  if (host.keyReference !== undefined) return { kind: 'reference', reference: host.keyReference, reason };
  if (host.forwardsKeyByName) return { kind: 'forward', reason };
  const instead = reason.startsWith('inside')
    ? 'Add the entries by hand (--print shows them) and keep the key out of that file.'
    : `Run again without --config-path to write ${usualPath}, or add the entries by hand (--print shows them) and keep the key out of that file.`;
  throw new ConfigRefused(
    `${path} would put the API key in a file that is not your own ${host.name} config (it is ${reason}), where it may be shared or checked in, ` +
      `and ${host.name} cannot read the key from the environment instead. Nothing was changed. ${instead}`,
  );
}

/** Why the file may be seen by others, or undefined for the host's own per-user file. */
async function whyShared(path: string, usualPath: string): Promise<string | undefined> {
  const file = await canonical(path);
  if (file !== (await canonical(usualPath))) return `another file than ${usualPath}`;
  const workTree = await gitWorkTreeOf(dirname(file));
  return workTree === undefined ? undefined : `inside the git work tree ${workTree}`;
}

/**
 * The absolute path with symlinks resolved as far as it exists: a folder still to be made is made
 * where its nearest existing ancestor points (~/.config a link into a dotfiles repository, say).
 */
async function canonical(path: string): Promise<string> {
  const rest: string[] = [];
  for (let existing = resolve(path); ; existing = dirname(existing)) {
    try {
      return join(await realpath(existing), ...rest);
    } catch {
      if (dirname(existing) === existing) return resolve(path);
      rest.unshift(basename(existing));
    }
  }
}

/** The nearest folder at or above `folder` holding .git (a folder, or a file in a linked worktree). */
export async function gitWorkTreeOf(folder: string): Promise<string | undefined> {
  for (let current = folder; ; current = dirname(current)) {
    if (
      await stat(join(current, '.git')).then(
        () => true,
        () => false,
      )
    )
      return current;
    if (dirname(current) === current) return undefined;
  }
}
