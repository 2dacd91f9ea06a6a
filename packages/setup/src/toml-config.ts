// Merging servers into Codex's config.toml without a TOML library: the file is read as a list of
// statements (table headers, key = value lines, blank and comment lines), which is enough to find
// our tables and to know where every value ends, multi-line strings and arrays included. Our
// tables, [mcp_servers.<name>] and [mcp_servers.<name>.env], get their keys set line by line;
// every other byte of the file stays as it was. A file that cannot be read this way, or that
// defines our servers in a form we do not edit (inline tables, dotted keys), is refused.
import { ConfigRefused } from './config-error.js';
import type { ServerEntry } from './hosts.js';
import { refuseNearNames } from './near-names.js';
import { quoted } from './shown.js';
import { ESCAPES, NestedTooDeep, scanToml, type Statement, TomlSyntax } from './toml-scanner.js';

export { scanToml };

/** A TOML basic string: the characters TOML requires escaped are escaped. */
function tomlString(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters TOML requires escaped
  const escaped = value.replace(/[\\"\u0000-\u001f\u007f]/g, (char) => {
    const named = Object.entries(ESCAPES).find(([name, sequence]) => sequence === char && name !== 'e')?.[0];
    return named ? `\\${named}` : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return `"${escaped}"`;
}

const tomlKey = (key: string) => (/^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key));
const tomlValue = (value: string | string[]) => (Array.isArray(value) ? `[${value.map(tomlString).join(', ')}]` : tomlString(value));
/** A key of the file as a message shows it: bare where TOML allows, else quoted with every control escaped (the file may be hostile). */
const shownKey = (key: string) => (/^[A-Za-z0-9_-]+$/.test(key) ? key : quoted(key));
const samePath = (a: string[], b: string[]) => a.length === b.length && a.every((part, index) => part === b[index]);

interface Section {
  header: Statement;
  /** The key = value statements of the table, with the table-relative key. */
  keyvals: Statement[];
}

/** The new text of config.toml with `entries` as [mcp_servers.<name>] tables. */
export function mergeTomlConfig(existing: string | undefined, entries: Record<string, ServerEntry>, path: string): string {
  const text = existing ?? '';
  const statements = readStatements(text, path);
  const names = Object.keys(entries);
  const sections = sectionsOf(statements, names, path);
  refuseNearNames(serverNames(statements), names, 'Codex', path);
  const edits = new TomlEdits(text, path);
  for (const name of names) edits.setServer(name, entries[name] as ServerEntry, sections);
  const result = edits.result();
  try {
    scanToml(result);
  } catch (error) {
    throw new Error(`internal error: the merged ${path} would not be valid TOML (${(error as Error).message}); nothing was written`);
  }
  return result;
}

/** The file's statements; a file the scanner cannot read is refused, left as it is. */
function readStatements(text: string, path: string): Statement[] {
  try {
    return scanToml(text);
  } catch (error) {
    if (!(error instanceof TomlSyntax)) throw error;
    if (error instanceof NestedTooDeep)
      throw new ConfigRefused(
        `${path} nests its values too deeply to be read safely (${error.message}); nothing was changed. Add the servers by hand: run again with --print for the snippet.`,
      );
    throw new ConfigRefused(
      `${path} could not be read safely as TOML (${error.message}), so it was left as it is. Fix it, or add the servers by hand: run again with --print for the snippet.`,
    );
  }
}

/**
 * The changes to config.toml, gathered before any is made: edits at offsets of the original text,
 * and new tables to append at its end. New lines end as the file's lines do.
 */
class TomlEdits {
  /** [offset in the original text, length removed there, text inserted]. */
  private readonly edits: [number, number, string][] = [];
  private readonly appended: string[] = [];
  private readonly newline: string;

  constructor(
    private readonly text: string,
    private readonly path: string,
  ) {
    this.newline = text.includes('\r\n') ? '\r\n' : '\n';
  }

  /** The server's [mcp_servers.<name>] and [mcp_servers.<name>.env] tables, set to `entry`. */
  setServer(name: string, entry: ServerEntry, sections: Map<string, Section>): void {
    const tablePath = ['mcp_servers', name];
    const main = sections.get(tablePath.join('\u0000'));
    const env = sections.get([...tablePath, 'env'].join('\u0000'));
    const block = this.appended.length;
    refuseForwardedSetHere(entry, env, [...tablePath, 'env'], this.path);
    const envVars = entry.envVars ? mergedEnvVars(main, entry.envVars, tablePath, this.path) : undefined;
    this.setKeys(main, tablePath, { command: entry.command, args: entry.args, ...(envVars ? { env_vars: envVars } : {}) });
    this.setKeys(env, [...tablePath, 'env'], entry.env, main);
    // A server new to the file is one block: its table and its env table, a blank line between.
    const appended = this.appended;
    if (appended.length - block === 2) appended.splice(block, 2, `${appended[block]}${this.newline}${appended[block + 1]}`);
  }

  /** The original text with the edits made and the new tables appended. */
  result(): string {
    const { newline } = this;
    let result = applyEdits(this.text, this.edits);
    if (this.appended.length > 0) {
      const separator = result === '' ? '' : result.endsWith('\n') ? newline : newline + newline;
      result += separator + this.appended.join(newline);
    }
    return result;
  }

  private setKeys(section: Section | undefined, tablePath: string[], values: Record<string, string | string[]>, after?: Section): void {
    if (section) this.updateTable(section, tablePath, values);
    else this.addTable(tablePath, values, after);
  }

  /** A table the file does not have: right after `after`'s keys (an env table after its server's), or at the end. */
  private addTable(tablePath: string[], values: Record<string, string | string[]>, after?: Section): void {
    const table =
      this.header(tablePath) +
      Object.entries(values)
        .map(([key, value]) => this.line(key, value))
        .join('');
    if (after) this.edits.push([lastContentEnd(after), 0, this.newline + table]);
    else this.appended.push(table);
  }

  /** A table the file has: a key's value replaced where it differs, keys it lacks added after its header. */
  private updateTable(section: Section, tablePath: string[], values: Record<string, string | string[]>): void {
    const { text } = this;
    const missing: string[] = [];
    for (const [key, value] of Object.entries(values)) {
      const current = section.keyvals.filter((statement) => samePath(statement.keys, [key]));
      if (current.length > 1)
        throw new ConfigRefused(`${this.path}: [${tablePath.join('.')}] sets ${key} twice, which TOML does not allow; nothing was changed.`);
      const statement = current[0];
      if (!statement) {
        missing.push(this.line(key, value));
        continue;
      }
      const indent = /^[ \t]*/.exec(text.slice(statement.start))?.[0] ?? '';
      // Only the key and its value are rewritten: blanks and a comment after the value stay, and
      // so does the line's ending (a value on the file's last line may have none).
      const valueEnd = statement.valueEnd ?? statement.end;
      const replacement = this.line(key, value, indent).replace(/\r?\n$/, '');
      if (text.slice(statement.start, valueEnd) !== replacement) this.edits.push([statement.start, valueEnd - statement.start, replacement]);
    }
    // A header on the file's last line has no newline of its own: the keys go on the next line.
    const afterHeader = text[section.header.end - 1] === '\n' ? '' : this.newline;
    if (missing.length > 0) this.edits.push([section.header.end, 0, afterHeader + missing.join('')]);
  }

  private line(key: string, value: string | string[], indent = ''): string {
    return `${indent}${tomlKey(key)} = ${tomlValue(value)}${this.newline}`;
  }

  private header(keys: string[]): string {
    return `[${keys.map(tomlKey).join('.')}]${this.newline}`;
  }
}

/**
 * The text rebuilt from the original in order. At one offset, insertions go before a replaced line
 * (keys added after a header come before its first key), and insertions keep their order.
 */
function applyEdits(text: string, edits: [number, number, string][]): string {
  const ordered = edits
    .map((edit, index) => ({ edit, index }))
    .sort((a, b) => a.edit[0] - b.edit[0] || Number(a.edit[1] > 0) - Number(b.edit[1] > 0) || a.index - b.index);
  let result = '';
  let cursor = 0;
  for (const {
    edit: [offset, removed, inserted],
  } of ordered) {
    result += text.slice(cursor, offset) + inserted;
    cursor = offset + removed;
  }
  return result + text.slice(cursor);
}

/** The names an env_vars the table already has passes on, ours added: the person's own names stay. */
function mergedEnvVars(main: Section | undefined, ours: string[], tablePath: string[], path: string): string[] {
  const current = main?.keyvals.filter((statement) => samePath(statement.keys, ['env_vars'])) ?? [];
  const statement = current[0];
  if (!statement || current.length > 1) return ours;
  if (!statement.strings) {
    throw new ConfigRefused(
      `${path}: [${tablePath.join('.')}] has an env_vars that is not a list of names in one-line strings, a form this setup does not edit; nothing was changed. Add ${ours.join(', ')} to it by hand.`,
    );
  }
  return [...statement.strings, ...ours.filter((name) => !statement.strings?.includes(name))];
}

/** A variable the host passes on by name must not be set in the file: a value there would win, and stay in the file. */
function refuseForwardedSetHere(entry: ServerEntry, env: Section | undefined, envPath: string[], path: string): void {
  for (const name of entry.envVars ?? []) {
    if (env?.keyvals.some((statement) => samePath(statement.keys, [name]))) {
      throw new ConfigRefused(
        `${path}: [${envPath.join('.')}] sets ${name}, which must not be written in this file; remove that line (and set ${name} in the environment instead), then run again. Nothing was changed.`,
      );
    }
  }
}

/** Our servers' tables, keyed by path; refuses forms of mcp_servers this tool does not edit. */
function sectionsOf(statements: Statement[], names: string[], path: string): Map<string, Section> {
  const sections = new Map<string, Section>();
  const seen = new Set<string>();
  let table: string[] = [];
  let current: Section | undefined;
  const refuse = (what: string): never => {
    throw new ConfigRefused(
      `${path} ${what}, a form this setup does not edit (it writes [mcp_servers.<name>] tables). Nothing was changed; edit the file by hand with the snippet from --print.`,
    );
  };
  for (const statement of statements) {
    if (statement.kind === 'header') {
      table = statement.keys;
      const id = table.join('\u0000');
      if (table[0] === 'mcp_servers' && statement.arrayTable) refuse('has [[mcp_servers]] array tables');
      if (seen.has(id) && !statement.arrayTable) refuse(`defines [${table.map(shownKey).join('.')}] twice`);
      seen.add(id);
      const ours = table[0] === 'mcp_servers' && names.includes(table[1] as string) && (table.length === 2 || (table.length === 3 && table[2] === 'env'));
      current = ours ? { header: statement, keyvals: [] } : undefined;
      if (current) sections.set(id, current);
    } else if (statement.kind === 'keyval') {
      const full = firstTwo(table, statement.keys);
      // mcp_servers itself as a value (an inline table) cannot take a [mcp_servers.<name>] table
      // after it, nor can one of ours given as one; another server's dotted keys (mcp_servers.other.command
      // at the top) can, as TOML allows tables under one made by dotted keys.
      if (full[0] === 'mcp_servers' && table.length < 2 && (full.length === 1 || names.includes(full[1] as string))) {
        refuse(`sets ${full.join('.')} as a value or dotted key`);
      }
      if (current && table.length === 2 && statement.keys[0] === 'env') refuse(`sets the env of [${table.join('.')}] inline`);
      current?.keyvals.push(statement);
    }
  }
  return sections;
}

/** The names of the servers the file has: [mcp_servers.<name>] tables (and theirs), dotted keys and keys of [mcp_servers]. */
export function serverNames(statements: Statement[]): string[] {
  const names = new Set<string>();
  let table: string[] = [];
  for (const statement of statements) {
    if (statement.kind === 'header') table = statement.keys;
    const full = statement.kind === 'header' ? table : statement.kind === 'keyval' ? firstTwo(table, statement.keys) : [];
    if (full[0] === 'mcp_servers' && full[1] !== undefined) names.add(full[1]);
  }
  return [...names];
}

/**
 * The first two parts of a key's full path (its table's, then its own): all these checks look at. Not
 * the whole path copied: for every key under a header of many dotted parts, that cost time with the
 * square of the file (200 KB, a minute).
 */
function firstTwo(table: string[], keys: string[]): string[] {
  return [...table.slice(0, 2), ...keys.slice(0, Math.max(0, 2 - table.length))];
}

/** Where a table's last key = value line ends (its trailing blank and comment lines stay after). */
function lastContentEnd(section: Section): number {
  return section.keyvals.at(-1)?.end ?? section.header.end;
}

/**
 * The text of config.toml without the tables of these servers ([mcp_servers.<name>] and every table
 * under it: each header to its last key, comments among them); every other byte stays. Blank lines after a
 * table go with it, so none pile up where it was; a comment after its keys stays (it may head the
 * next table). Refuses what mergeTomlConfig refuses (our servers as dotted keys, inline tables).
 */
export function removeTomlServers(existing: string, names: string[], path: string): string {
  const statements = readStatements(existing, path);
  sectionsOf(statements, names, path);
  const regions: [number, number][] = [];
  let region: [number, number] | undefined;
  for (const statement of statements) {
    if (statement.kind === 'header') {
      const ours = statement.keys[0] === 'mcp_servers' && names.includes(statement.keys[1] as string) && !statement.arrayTable;
      region = ours ? [statement.start, statement.end] : undefined;
      if (region) regions.push(region);
    } else if (region && statement.kind === 'keyval') region[1] = statement.end;
  }
  let result = '';
  let cursor = 0;
  for (const [start, end] of extendOverBlankLines(existing, statements, regions)) {
    result += existing.slice(cursor, start);
    cursor = end;
  }
  result += existing.slice(cursor);
  try {
    scanToml(result);
  } catch (error) {
    throw new Error(`internal error: ${path} without our servers would not be valid TOML (${(error as Error).message}); nothing was written`);
  }
  return result;
}

const isBlankLine = (text: string, statement: Statement) => /^[ \t]*(?:\r?\n)?$/.test(text.slice(statement.start, statement.end));

/**
 * Each region (a header to its last key) takes the blank lines after it, and regions that then meet
 * are one. One reaching the end of the file takes the blank lines before it instead, so the file
 * does not end in them.
 */
function extendOverBlankLines(text: string, statements: Statement[], regions: [number, number][]): [number, number][] {
  const blank = (statement: Statement) => statement.kind === 'trivia' && isBlankLine(text, statement);
  for (const region of regions) for (const statement of statements) if (statement.start === region[1] && blank(statement)) region[1] = statement.end;
  const merged: [number, number][] = [];
  for (const region of regions) {
    const last = merged.at(-1);
    if (last && last[1] === region[0]) last[1] = region[1];
    else merged.push([...region]);
  }
  const last = merged.at(-1);
  if (last && last[1] === text.length)
    for (const statement of [...statements].reverse()) if (statement.end === last[0] && blank(statement)) last[0] = statement.start;
  return merged;
}
