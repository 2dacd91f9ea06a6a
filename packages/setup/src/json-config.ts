// Merging servers into a host's JSON config (Claude Desktop, Claude Code, VS Code, Cursor, Gemini
// CLI). Our entries are written into the file's text in place (json-splice.ts), so everything else
// in it stays byte for byte; within one of our entries, fields and env variables the user added are
// kept too. Comments (and trailing commas) stay where the host's own reader takes them (jsonc.ts);
// elsewhere a file holding them is refused rather than rewritten without them.
import { ConfigRefused } from './config-error.js';
import { VSCODE_KEY_INPUT, type Host } from './hosts.js';
import { readableJson } from './jsonc.js';
import { refuseNearNames } from './near-names.js';
import {
  appendEdit,
  applyEdits,
  arrayAt,
  baseAt,
  type Container,
  type Edit,
  type Layout,
  type Member,
  lineEnding,
  memberText,
  objectAt,
  renderValue,
  type Span,
  skipSpace,
  stringEnd,
} from './json-splice.js';
import { quoted } from './shown.js';

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The new text of the file. `existing` undefined or blank: a new file. Throws ConfigRefused for a
 * file it cannot merge into safely.
 */
export function mergeJsonConfig(existing: string | undefined, host: Host, entries: Record<string, JsonObject>, path: string): string {
  // Comments blanked where the host reads them: the same offsets, so edits found in it apply to `existing`.
  const plain = existing === undefined ? undefined : readableJson(host, existing);
  const config = parse(plain, host, path);
  const servers = mergedServers(config, host, entries, path);
  const input = host.asksForKey ? mergedInput(config, path) : undefined;
  if (existing === undefined || plain === undefined || isBlank(plain)) {
    const text = `${JSON.stringify(freshConfig(host, servers, input), null, '  ')}\n`;
    if (existing === undefined) return text;
    const eol = lineEnding(existing);
    // Comments alone: kept, the config after them.
    const kept = isBlank(existing) ? '' : `${existing.replace(/[ \t\r\n]+$/, '')}${eol}`;
    return kept + text.replace(/\n/g, eol);
  }
  return applyEdits(existing, editsFor(plain, existing, host, servers, input, path));
}

/** A config of nothing but ours. */
const freshConfig = (host: Host, servers: JsonObject, input: { value: JsonObject } | undefined): JsonObject => ({
  [host.container]: servers,
  ...(input ? { inputs: [input.value] } : {}),
});

/** Our entries as they are to be: each given one, over what the user added to it. */
function mergedServers(config: JsonObject, host: Host, entries: Record<string, JsonObject>, path: string): Record<string, JsonObject> {
  const servers = config[host.container] ?? {};
  if (!isObject(servers)) throw new ConfigRefused(`${path}: "${host.container}" is not an object, so the servers cannot be added to it; nothing was changed.`);
  refuseNearNames(Object.keys(servers), Object.keys(entries), host.name, path);
  const merged: Record<string, JsonObject> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const current = Object.hasOwn(servers, name) ? servers[name] : undefined;
    if (current === undefined) {
      merged[name] = entry;
      continue;
    }
    if (!isObject(current) || (current.env !== undefined && !isObject(current.env))) {
      throw new ConfigRefused(
        `${path}: the existing "${name}" entry is not a server object with an env object; fix or remove it, then run again. Nothing was changed.`,
      );
    }
    if (isRemote(current)) {
      throw new ConfigRefused(
        `${path}: the existing "${name}" entry is a remote server (a url or an http or sse type), and adding a command to it would make an entry that is neither; ` +
          'rename or remove it, then run again. Nothing was changed.',
      );
    }
    merged[name] = { ...current, ...entry, env: { ...(current.env as JsonObject | undefined), ...(entry.env as JsonObject) } };
  }
  return merged;
}

/** The hosts' ways of naming a server they reach over the network rather than start (Gemini CLI: httpUrl; Windsurf: serverUrl). */
const REMOTE_FIELDS = ['url', 'httpUrl', 'serverUrl'];

const isRemote = (entry: JsonObject) =>
  REMOTE_FIELDS.some((field) => Object.hasOwn(entry, field)) || (typeof entry.type === 'string' && entry.type !== 'stdio');

/**
 * VS Code's input for the key, over the user's own of that id; `at` its place in "inputs", -1 for a
 * new one. Of two inputs of that id VS Code asks with the last (inputs.filter(id).pop()): that one.
 */
function mergedInput(config: JsonObject, path: string): { value: JsonObject; at: number } {
  const inputs = config.inputs ?? [];
  if (!Array.isArray(inputs)) throw new ConfigRefused(`${path}: "inputs" is not a list; nothing was changed.`);
  const at = inputs.findLastIndex((input) => isObject(input) && input.id === VSCODE_KEY_INPUT.id);
  return { value: { ...(at < 0 ? {} : (inputs[at] as JsonObject)), ...VSCODE_KEY_INPUT }, at };
}

/**
 * The edits that write `servers` (and `input`) into `source`, made from `text`: the same with its
 * comments blanked, a JSON object as parse() took it.
 */
function editsFor(
  text: string,
  source: string,
  host: Host,
  servers: Record<string, JsonObject>,
  input: { value: JsonObject; at: number } | undefined,
  path: string,
): Edit[] {
  // A comment's line shows the indent too (a file of one comment and no member yet).
  const layout: Layout = { unit: /^([ \t]+)["}\]/]/m.exec(source)?.[1] ?? '  ', eol: lineEnding(text), source };
  const top = objectAt(text, skipSpace(text, 0));
  // Nothing of the person's (not a comment either): the whole object written anew, on lines of its own.
  if (top.items.length === 0 && !hasComment(text, source, { start: top.open, end: top.close + 1 }))
    return [{ start: top.open, end: top.close + 1, text: renderValue(freshConfig(host, servers, input), layout, '') }];
  refuseTwice(text, top, [host.container, ...(input ? ['inputs'] : [])], 'the file', path);
  const edits: Edit[] = [];
  const added: ((base: string | undefined) => string)[] = [];
  const container = top.items.find((member) => member.key === host.container);
  // A null container or inputs (mergedServers and mergedInput refuse any other that is not one) is replaced whole.
  if (container === undefined) added.push(memberText(host.container, servers, layout));
  else if (text[container.value.start] !== '{') edits.push(replaced(text, container.value, servers, layout, container.keyStart));
  else edits.push(...serverEdits(text, objectAt(text, container.value.start), servers, layout, `"${host.container}"`, path));
  if (input !== undefined) {
    const inputs = top.items.find((member) => member.key === 'inputs');
    if (inputs === undefined) added.push(memberText('inputs', [input.value], layout));
    else if (text[inputs.value.start] !== '[') edits.push(replaced(text, inputs.value, [input.value], layout, inputs.keyStart));
    else {
      // Compared whole (the done text says whether the key's input was set).
      refuseTooDeep(text, inputs.value, '"inputs"', path);
      const array = arrayAt(text, inputs.value.start);
      const element = array.items[input.at];
      if (element === undefined) edits.push(appendEdit(text, array, [(base) => renderValue(input.value, layout, base)], layout));
      else edits.push(replaced(text, element, input.value, layout, element.start, { what: `the input "${VSCODE_KEY_INPUT.id}"`, path }));
    }
  }
  if (added.length > 0) edits.push(appendEdit(text, top, added, layout));
  return edits;
}

/** Our entries written into the container object (`name` for the person): each replaced where it is, or added after the person's. */
function serverEdits(text: string, object: Container<Member>, servers: Record<string, JsonObject>, layout: Layout, name: string, path: string): Edit[] {
  refuseTwice(text, object, Object.keys(servers), name, path);
  const edits: Edit[] = [];
  const appended: ((base: string | undefined) => string)[] = [];
  for (const [server, entry] of Object.entries(servers)) {
    const member = object.items.find(({ key }) => key === server);
    if (member === undefined) appended.push(memberText(server, entry, layout));
    else edits.push(replaced(text, member.value, entry, layout, member.keyStart, { what: `its "${server}" entry`, path }));
  }
  if (appended.length > 0) edits.push(appendEdit(text, object, appended, layout));
  return edits;
}

/**
 * Refuses an object giving one of `keys` twice: the edit is made at the first, where JSON.parse
 * (and so the hosts) takes the last, so which one counts would be a guess. Other keys given twice
 * are the person's, left as they are.
 */
function refuseTwice(text: string, object: Container<Member>, keys: string[], name: string, path: string): void {
  for (const key of keys) {
    const members = object.items.filter((member) => member.key === key);
    const second = members[1];
    if (second !== undefined) {
      refuse(
        path,
        `has the key ${JSON.stringify(key)} twice in ${name} (${lineOf(text, members[0]!.keyStart)} and ${lineOf(text, second.keyStart)}), so which one the host reads is unclear`,
      );
    }
  }
}

/**
 * `value` in place of the one at `span`, laid out from the indent of the line `lineAt` is on; kept
 * where it is that already. Written anew, the value must lose nothing of the person's (`check`
 * names it): a null container or inputs replaced whole has nothing to lose.
 */
function replaced(text: string, span: Span, value: unknown, layout: Layout, lineAt: number, check?: { what: string; path: string }): Edit {
  if (check) refuseTooDeep(text, span, check.what, check.path);
  const same = JSON.stringify(JSON.parse(text.slice(span.start, span.end))) === JSON.stringify(value);
  // Left as it is: nothing to change (its comments too).
  if (same) return { start: span.start, end: span.start, text: '' };
  if (check) {
    if (hasComment(text, layout.source, span))
      refuse(check.path, `has a comment or a trailing comma in ${check.what} (${lineOf(text, span.start)}), which setup writes anew, and it would be lost`);
    refuseLosses(text, span, check.what, check.path);
  }
  return { ...span, text: renderValue(value, layout, baseAt(text, lineAt)) };
}

/** Whether the person's text holds a comment (or a trailing comma) at `span`, blanked in `text`. */
const hasComment = (text: string, source: string | undefined, span: Span) =>
  source !== undefined && text.slice(span.start, span.end) !== source.slice(span.start, span.end);

/**
 * JSON's own whitespace only: an empty file. Not String.trim(), which removes a no-break space and
 * the like as well: a file of those taken for empty would be replaced, losing them.
 */
const isBlank = (text: string) => /^[ \t\r\n]*$/.test(text);

function parse(existing: string | undefined, host: Host, path: string): JsonObject {
  if (existing === undefined || isBlank(existing)) return {};
  let config: unknown;
  try {
    config = JSON.parse(existing);
  } catch (error) {
    // The parser's own message quotes the file, which may hold other servers' secrets: say where only.
    throw new ConfigRefused(
      `${path} is not valid JSON${where(existing, error)} (${readerNote(host)}), so it was left as it is. Fix it, or add the servers by hand: run again with --print for the snippet.`,
    );
  }
  if (!isObject(config)) throw new ConfigRefused(`${path} does not hold a JSON object; nothing was changed.`);
  return config;
}

/** What the host's own reader takes besides JSON, so the person knows what to fix. */
function readerNote(host: Host): string {
  if (host.jsonc === undefined) return `${host.name} reads it as plain JSON: comments and trailing commas are not JSON`;
  return host.jsonc.trailingCommas
    ? `${host.name} takes comments and trailing commas in it, but no other departure from JSON`
    : `${host.name} takes comments in it, but not trailing commas`;
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** An object's keys so far, and whether JavaScript would list them in that order. */
interface KeysSeen {
  keys: Set<string>;
  /** The greatest array-index key so far, -1 before one. */
  lastIndex: number;
  /** Whether a key that is not an array index came already. */
  other: boolean;
}

/**
 * How deep a value setup reads back or writes (one of our entries, VS Code's inputs) may nest, as in
 * Codex's TOML: an entry of ours is written back indented, growing with the square of its depth
 * (2 KB nested 1,000 deep is 4 MB).
 */
const MAX_DEPTH = 100;

/**
 * Refuses the value at `span` (`what` names it) nested more than MAX_DEPTH deep: setup reads it
 * back with JSON.stringify, which recurses, and writes it indented, growing with the square of its
 * depth. Values elsewhere in the file, which setup neither reads back nor writes, may nest as they
 * like. Only strings and brackets need telling apart in valid JSON.
 */
function refuseTooDeep(text: string, span: Span, what: string, path: string): void {
  let depth = 0;
  for (let i = span.start; i < span.end; i++) {
    const char = text[i] as string;
    if (char === '"') i = stringEnd(text, i) - 1;
    else if (char === '{' || char === '[') {
      if (depth > MAX_DEPTH) refuse(path, `nests its values more than ${MAX_DEPTH} deep (${lineOf(text, i)}, in ${what})`);
      depth++;
    } else if (char === '}' || char === ']') depth--;
  }
}

/**
 * A value of the file that setup writes anew (one of our entries, VS Code's key input) comes back
 * through JSON.stringify, which spells each number its own way, keeps only the last of a key given
 * twice, and lists an object's array-index keys ("1", "2024") first, in numeric order. Refuses the
 * value at `span` where any of these would show. Nothing outside it is written, so nothing outside
 * it is looked at. `what` names the value for the person.
 */
function refuseLosses(text: string, span: Span, what: string, path: string): void {
  const objects: (KeysSeen | undefined)[] = [];
  let expectingKey = false;
  // Said only in a refusal: lineOf counts lines from the start, so for every key and number it cost time with the square of the entry.
  const where = (at: number) => () => `${lineOf(text, at)}, in ${what}, which setup writes anew`;
  for (let i = span.start; i < span.end; i++) {
    const char = text[i] as string;
    if (char === '"') {
      const end = stringEnd(text, i);
      const seen = objects.at(-1);
      if (seen && expectingKey) checkKey(seen, JSON.parse(text.slice(i, end)) as string, where(i), path);
      i = end - 1;
    } else if (char === '{' || char === '[') {
      objects.push(char === '{' ? { keys: new Set(), lastIndex: -1, other: false } : undefined);
      expectingKey = char === '{';
    } else if (char === '}' || char === ']') objects.pop();
    else if (char === ',') expectingKey = objects.at(-1) !== undefined;
    else if (char === ':') expectingKey = false;
    else if (char === '-' || (char >= '0' && char <= '9')) i = checkNumber(text, i, where(i), path) - 1;
  }
}

/** The greatest array index: a key spelled as one up to this is listed before all others. */
const MAX_ARRAY_INDEX = 2 ** 32 - 2;

function checkKey(seen: KeysSeen, key: string, where: () => string, path: string): void {
  const spelled = quoted(key);
  if (seen.keys.has(key)) refuse(path, `has the key ${spelled} twice in one object (${where()}), and only the last would be kept`);
  seen.keys.add(key);
  const index = /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) <= MAX_ARRAY_INDEX ? Number(key) : undefined;
  if (index === undefined) {
    seen.other = true;
    return;
  }
  if (seen.other || index < seen.lastIndex) {
    refuse(path, `has the key ${spelled} (${where()}) after other keys, and it would be moved before them (keys like "1" are written first, in numeric order)`);
  }
  seen.lastIndex = index;
}

/** Where the number at `start` ends; refuses one JSON.stringify would spell otherwise (1.50, 1e3, a big integer). */
function checkNumber(text: string, start: number, where: () => string, path: string): number {
  NUMBER.lastIndex = start;
  const spelled = NUMBER.exec(text)?.[0] ?? '';
  const rewritten = JSON.stringify(Number(spelled));
  if (rewritten !== spelled) refuse(path, `has the number ${spelled} (${where()}), which would be rewritten as ${rewritten}`);
  return start + spelled.length;
}

function refuse(path: string, problem: string): never {
  throw new ConfigRefused(
    `${path} ${problem}; nothing was changed. Change that in the file, or add the servers by hand: run again with --print for the snippet.`,
  );
}

function lineOf(text: string, at: number): string {
  const before = text.slice(0, at).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

function where(text: string, error: unknown): string {
  const position = /position (\d+)/.exec(String((error as Error).message))?.[1];
  if (position === undefined) return '';
  const before = text.slice(0, Number(position)).split('\n');
  return ` at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}
