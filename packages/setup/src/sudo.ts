// Setup run with sudo where sudo sets HOME to root's own (Linux's default): it writes root's config
// for the host, which the person's host, run as themselves, never reads; the servers seem not to
// be there at all. Where sudo keeps HOME (macOS), the file is the person's and is given back to
// them (files.ts); nothing to say then.
import { statSync } from 'node:fs';

/** A line when root, run by sudo for another user, writes into a home that is not theirs; empty otherwise. */
export function sudoNotes(home: string, hostName: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const user = env.SUDO_USER;
  const uid = Number(env.SUDO_UID);
  if (process.getuid?.() !== 0 || !user || !Number.isInteger(uid) || uid === 0) return [];
  let owner: number;
  try {
    owner = statSync(home).uid;
  } catch {
    return [];
  }
  if (owner === uid) return [];
  return [
    `setup ran as root by sudo, so it wrote the ${hostName} config in root's home (${home}); ${user}'s own ${hostName} does not read it. ` +
      `If it was meant for ${user}, run setup again without sudo.`,
  ];
}
