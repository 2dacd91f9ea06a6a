// An entry the person named like one of ours but spelled otherwise (Engage-Contact, engage_contact,
// "engage-contact " with a space): adding ours beside it would have the host run both, the same
// tools twice. Setup does not guess whether that entry is an old copy of ours or something of the
// person's to keep: it refuses the file, names the entry, and says how to go on. Where ours is
// there already beside such an entry, it updates ours, keeps theirs, and says the host runs both.
import { ConfigRefused } from './config-error.js';
import { quoted } from './shown.js';

/**
 * A server name as compared here: case, spaces, dots, dashes and underscores set aside, and so are
 * the dashes NFKC leaves as they are (U+2010 from a word processor) and the characters that show as
 * nothing (a zero-width space, a soft hyphen): "engage-contact" followed by one of those looks
 * exactly like ours.
 */
const squeezed = (name: string) =>
  name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s._\p{Pd}\p{Cf}]+/gu, '');

/**
 * Refuses adding any of `ours` that `existing` (the names the file's servers have) lacks but has
 * under another spelling. One already there under our own name is updated as before.
 */
export function refuseNearNames(existing: string[], ours: string[], hostName: string, path: string): void {
  for (const name of ours) {
    if (existing.includes(name)) continue;
    const near = nearNamesOf(name, existing);
    if (near.length === 0) continue;
    const named = near.map(quoted).join(' and ');
    throw new ConfigRefused(
      `${path} has a server named ${named}, which looks like ${name} spelled another way; adding ${name} beside it would have ${hostName} run both, ` +
        `the same tools twice. Nothing was changed. Rename that entry to "${name}" (setup then updates it, keeping what you added to it) or remove it, then run again.`,
    );
  }
}

/** The names in `existing` that look like `name` but are spelled otherwise. */
function nearNamesOf(name: string, existing: string[]): string[] {
  return existing.filter((other) => other !== name && squeezed(other) === squeezed(name));
}

/** A line for each entry of the person's (`existing`: the names of the file's servers) kept beside one of `ours` it looks like. */
export function nearNameNotes(existing: string[], ours: string[], hostName: string): string[] {
  return ours
    .filter((name) => existing.includes(name))
    .flatMap((name) =>
      nearNamesOf(name, existing).map(
        (other) =>
          `${quoted(other)} looks like ${name} spelled another way: ${hostName} runs both, the same tools twice; remove it unless you mean to run both.`,
      ),
    );
}
