// Taking our servers out of a host's JSON config (--remove): each entry of one of our names is cut
// from the text with the comma that joined it, its own lines with it where it had lines of its
// own, and every other byte stays, comments a host reads included (jsonc.ts). A file setup could
// not have written its entries into as they are is refused, as a merge into it would be.
import { ConfigRefused } from './config-error.js';
import { type Host, VSCODE_KEY_INPUT } from './hosts.js';
import { type Container, type Edit, type Member, applyEdits, arrayAt, objectAt, skipSpace } from './json-splice.js';
import { blankComments, parseHostJson, readableJson } from './jsonc.js';

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The text without the entries of these names in the host's servers object, and VS Code's key input
 * once nothing in the file names it; the same text where it has none of them.
 */
export function removeJsonServers(existing: string, host: Host, names: string[], path: string): string {
  let text = existing;
  for (const name of names) text = removeOne(text, host, name, path);
  if (host.asksForKey && !text.includes(KEY_INPUT_REFERENCE)) text = removeKeyInput(text, host);
  try {
    parseHostJson(host, text);
  } catch (error) {
    throw new Error(`internal error: ${path} without our servers would not be valid JSON (${(error as Error).message}); nothing was written`);
  }
  return text;
}

function removeOne(source: string, host: Host, name: string, path: string): string {
  const readable = readableJson(host, source);
  if (/^[ \t\r\n]*$/.test(readable)) return source;
  let config: unknown;
  try {
    config = JSON.parse(readable);
  } catch {
    throw new ConfigRefused(`${path} is not valid JSON as ${host.name} reads it, so it was left as it is; nothing was changed.`);
  }
  const servers = isObject(config) ? config[host.container] : undefined;
  if (!isObject(servers) || !Object.hasOwn(servers, name)) return source;
  // Comments blanked, trailing commas kept: the commas are what is cut.
  const scan = host.jsonc ? blankComments(source, false) : source;
  const container = onlyMember(objectAt(scan, skipSpace(scan, 0)), host.container, 'the file', path);
  const object = objectAt(scan, container.value.start);
  onlyMember(object, name, `"${host.container}"`, path);
  return applyEdits(
    source,
    cutMember(
      scan,
      source,
      object,
      object.items.findIndex((member) => member.key === name),
    ),
  );
}

/** How an entry names VS Code's key input: while one does (a comment too, to be uncommented), the input stays. */
export const KEY_INPUT_REFERENCE = `\${input:${VSCODE_KEY_INPUT.id}}`;

/** VS Code's inputs without the one setup adds for the key (by its id). */
function removeKeyInput(source: string, host: Host): string {
  let text = source;
  for (;;) {
    const scan = host.jsonc ? blankComments(text, false) : text;
    if (/^[ \t\r\n]*$/.test(scan)) return text;
    const inputs = objectAt(scan, skipSpace(scan, 0)).items.find((member) => member.key === 'inputs');
    if (inputs === undefined || scan[inputs.value.start] !== '[') return text;
    const array = arrayAt(scan, inputs.value.start);
    const index = array.items.findIndex((span) => {
      const element: unknown = JSON.parse(readableJson(host, scan.slice(span.start, span.end)));
      return isObject(element) && element.id === VSCODE_KEY_INPUT.id;
    });
    if (index < 0) return text;
    // Elements as members without keys, so an element is cut as a member is.
    const elements = { ...array, items: array.items.map((span) => ({ key: '', keyStart: span.start, value: span })) };
    text = applyEdits(text, cutMember(scan, text, elements, index));
  }
}

/** The one member of this key; two are refused, as the host reads the last and which was meant is unclear. */
function onlyMember(object: Container<Member>, key: string, where: string, path: string): Member {
  const members = object.items.filter((member) => member.key === key);
  if (members.length > 1)
    throw new ConfigRefused(`${path} has the key ${JSON.stringify(key)} twice in ${where}, so which one the host reads is unclear; nothing was changed.`);
  return members[0] as Member;
}

/** The edits that cut member `index` of `object` (found in `scan`, made to `source`). */
function cutMember(scan: string, source: string, object: Container<Member>, index: number): Edit[] {
  const member = object.items[index] as Member;
  const inner = { start: object.open + 1, end: object.close };
  // Its only member, and nothing else inside (no comment): an empty object, as JSON.stringify writes one.
  if (object.items.length === 1 && scan.slice(inner.start, inner.end) === source.slice(inner.start, inner.end)) return [{ ...inner, text: '' }];
  const lineStart = ownLineStart(source, member.keyStart);
  const after = skipSpace(scan, member.value.end);
  if (scan[after] === ',') {
    // The member and its comma; on a line of its own, the whole line.
    const rest = /^[ \t]*(?:\r\n|\n|\r)/.exec(source.slice(after + 1, after + 1 + 256))?.[0];
    const end = lineStart !== undefined && rest !== undefined ? after + 1 + rest.length : horizontalSpaceEnd(source, after + 1);
    return [{ start: lineStart ?? member.keyStart, end, text: '' }];
  }
  // The last member: the comma before it goes, and it from the end of the line before (or the space before it).
  const previous = object.items[index - 1];
  const start = lineStart !== undefined ? lineBreakBefore(source, lineStart) : horizontalSpaceStart(source, member.keyStart);
  const cut: Edit = { start, end: member.value.end, text: '' };
  if (previous === undefined) return [cut];
  const comma = skipSpace(scan, previous.value.end);
  return [
    { start: comma, end: comma + 1, text: '' },
    { ...cut, start: Math.max(start, comma + 1) },
  ];
}

/** Where the line `at` is on starts, when only blanks come before `at` on it; undefined otherwise. */
function ownLineStart(text: string, at: number): number | undefined {
  const start = horizontalSpaceStart(text, at);
  return start === 0 || text[start - 1] === '\n' || text[start - 1] === '\r' ? start : undefined;
}

function horizontalSpaceStart(text: string, at: number): number {
  let start = at;
  while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
  return start;
}

function horizontalSpaceEnd(text: string, at: number): number {
  let end = at;
  while (text[end] === ' ' || text[end] === '\t') end++;
  return end;
}

/** The line break that ends the line before `lineStart` (a CRLF's CR). */
function lineBreakBefore(text: string, lineStart: number): number {
  if (lineStart === 0) return 0;
  return text[lineStart - 1] === '\n' && text[lineStart - 2] === '\r' ? lineStart - 2 : lineStart - 1;
}
