// Our servers in the file that a run leaves as they are (not among those it was given): where one
// holds another key or address than the one just written (a new key given to some servers only,
// the old one revoked), setup says so, naming the setting, never its value, and how to give it
// this one. The same key and address, or a setting the file does not hold as a plain string, say
// nothing.
import { DOMAIN_NAMES } from '@engage-mcp/shared/config';
import type { Host, ServerEntry } from './hosts.js';
import { parseHostJson } from './jsonc.js';
import { scanToml } from './toml-scanner.js';

type JsonObject = Record<string, unknown>;

const SETTINGS = ['ENGAGE_API_KEY', 'ENGAGE_BASE_URL'];

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A line for each of our other servers in `text` (the config as written) set otherwise than `written`. */
export function otherServerNotes(host: Host, text: string, written: Record<string, ServerEntry>): string[] {
  const ours = Object.values(written)[0];
  const body = text.replace(/^\uFEFF/, '');
  if (ours === undefined || body.trim() === '') return [];
  // VS Code's entries all name one input for the key: only the address can differ.
  const compared = SETTINGS.filter((setting) => ours.env[setting] !== undefined && !(host.asksForKey && setting === 'ENGAGE_API_KEY'));
  const others = DOMAIN_NAMES.map((domain) => `engage-${domain}`).filter((name) => !Object.hasOwn(written, name));
  const settingsOf = host.format === 'toml' ? tomlSettings(body) : jsonSettings(host, body);
  // The servers by what differs in them, so that seven servers left as they were make one line.
  const byDifference = new Map<string, string[]>();
  for (const name of others) {
    const theirs = settingsOf(name);
    if (theirs === undefined) continue;
    const differing = compared.filter((setting) => typeof theirs[setting] === 'string' && theirs[setting] !== ours.env[setting]);
    if (differing.length > 0) byDifference.set(differing.join(' and '), [...(byDifference.get(differing.join(' and ')) ?? []), name]);
  }
  return [...byDifference].map(([settings, names]) => {
    const domains = names.map((name) => name.slice('engage-'.length)).join(',');
    const [keep, them] = names.length === 1 ? ['keeps', 'it'] : ['keep', 'them'];
    return `${names.join(', ')} ${keep} another ${settings} than this run wrote; run again with --servers ${domains} (or all) to give ${them} this one.`;
  });
}

/** The env of a server in a JSON config, by name; undefined where there is no such server. */
function jsonSettings(host: Host, text: string): (name: string) => JsonObject | undefined {
  const config = parseHostJson(host, text) as JsonObject;
  const servers = isObject(config[host.container]) ? (config[host.container] as JsonObject) : {};
  return (name) => {
    const entry = Object.hasOwn(servers, name) ? servers[name] : undefined;
    if (!isObject(entry)) return undefined;
    return isObject(entry.env) ? entry.env : {};
  };
}

/** The one-line string settings of [mcp_servers.<name>.env], by name; undefined where the server has no table. */
function tomlSettings(text: string): (name: string) => JsonObject | undefined {
  const servers = new Map<string, JsonObject>();
  let table: string[] = [];
  for (const statement of scanToml(text)) {
    if (statement.kind === 'header') {
      table = statement.keys;
      const name = table[1];
      if (table[0] === 'mcp_servers' && name !== undefined && !servers.has(name)) servers.set(name, {});
    } else if (statement.kind === 'keyval' && table.length === 3 && table[0] === 'mcp_servers' && table[2] === 'env' && statement.keys.length === 1) {
      const env = servers.get(table[1] as string);
      if (env && statement.string !== undefined) env[statement.keys[0] as string] = statement.string;
    }
  }
  return (name) => servers.get(name);
}
