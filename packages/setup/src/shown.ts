// Text from the config file (a server's name, a project's path, a key, a table's name), as setup's
// messages quote it to the person's terminal. The file may be hostile (a repository's .mcp.json or
// .codex/config.toml): a control character in it would reach the terminal as a command (ESC starts
// an escape sequence: a window title, a colour, a hyperlink; U+009B does so alone in many
// terminals), a line break would start a line of its own ("Wrote …" that setup never wrote), and a
// bidirectional override or an invisible character would make the name read otherwise than it is.

/**
 * What a terminal would not show as itself: controls (C0, DEL, C1), format characters (bidi
 * overrides, zero-width ones, the byte order mark), separators other than the plain space (line and
 * paragraph separators, a no-break space), and lone surrogates.
 */
const UNSHOWN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]|(?! )\p{Zs}/u;
const ALL_UNSHOWN = new RegExp(UNSHOWN.source, 'gu');

/** As JSON escapes it: \uXXXX for each UTF-16 unit (a tag character past U+FFFF is two). */
const escaped = (char: string) => [...Array(char.length).keys()].map((unit) => `\\u${char.charCodeAt(unit).toString(16).padStart(4, '0')}`).join('');

/** `text` in double quotes, as JSON escapes it, and every character a terminal would not show as itself escaped too. */
export const quoted = (text: string): string => JSON.stringify(text).replace(ALL_UNSHOWN, escaped);

/** `text` as it is where every character of it shows as itself, or else quoted (a path, say, kept plain when plain). */
export const shown = (text: string): string => (UNSHOWN.test(text) || /^"/.test(text) ? quoted(text) : text);

const UNSHOWN_BUT_NEWLINE = new RegExp(`(?!\\n)(?:${UNSHOWN.source})`, 'gu');

/**
 * A whole message as printed, its own line breaks kept and any other such character escaped: a
 * last guard for what a message quotes unquoted (a path from the environment, a symlink's target).
 */
export const printable = (message: string): string => message.replace(UNSHOWN_BUT_NEWLINE, escaped);

/**
 * `path` as one word to paste into a command: in a POSIX shell as it is when plain, else in single
 * quotes (a quote in it as '\''), so a space, $ or ` stays itself; on Windows in double quotes, as
 * cmd and PowerShell both take them (JSON's doubled backslashes are no path there). Undefined where
 * a character of it would not show as itself (a line break, a control), or, on Windows, one that
 * cmd or PowerShell reads between double quotes: no command shown could then be pasted as it stands.
 */
export function shellWord(path: string, platform: NodeJS.Platform = process.platform): string | undefined {
  if (UNSHOWN.test(path)) return undefined;
  // cmd expands %NAME% and PowerShell $name and a backquote even between double quotes; a path with one gets no command.
  if (platform === 'win32') return /["%$`]/.test(path) ? undefined : `"${path}"`;
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}
