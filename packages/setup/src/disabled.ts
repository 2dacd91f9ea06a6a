// Entries of ours the host will not start though setup wrote them: the person turned them off, and
// setup keeps that choice, but says so rather than report them set up. Each host's own switch:
// Codex's enabled = false in the server's table (McpServerConfig.enabled, openai/codex);
// Gemini CLI's mcp.excluded and mcp.allowed lists (geminicli.com/docs/tools/mcp-server);
// Claude Code's per-project disabledMcpServers in ~/.claude.json (what /mcp writes); and
// "disabled": true in an entry, which Cline and others honour, though none of our hosts documents it.
import { parseHostJson } from './jsonc.js';
import type { Host } from './hosts.js';
import { shown } from './shown.js';
import { scanToml } from './toml-scanner.js';

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const names = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/**
 * A line for each of `servers` that `text` (the config as written) keeps from starting, saying how to
 * start it. `usualFile`: the file is the host's own per-user one; Claude Code's projects are read
 * only there (a project's .mcp.json holding "projects" is not Claude Code's list, and a note from it
 * would be the file's word, not the host's).
 */
export function disabledNotes(host: Host, text: string | undefined, servers: string[], usualFile: boolean): string[] {
  const body = text?.replace(/^\uFEFF/, '') ?? '';
  if (body.trim() === '') return [];
  return host.format === 'toml' ? tomlNotes(body, servers) : jsonNotes(host, parseHostJson(host, body) as JsonObject, servers, usualFile);
}

function tomlNotes(text: string, servers: string[]): string[] {
  const notes: string[] = [];
  let table: string[] = [];
  for (const statement of scanToml(text)) {
    if (statement.kind === 'header') table = statement.keys;
    if (statement.kind !== 'keyval' || table.length !== 2 || table[0] !== 'mcp_servers' || !servers.includes(table[1] as string)) continue;
    const line = text.slice(statement.start, statement.valueEnd);
    if (statement.keys.length === 1 && statement.keys[0] === 'enabled' && /=\s*false$/.test(line)) {
      notes.push(`${table[1]}: Codex will not start it, as its table has enabled = false; set enabled = true or delete that line to start it.`);
    }
  }
  return notes;
}

function jsonNotes(host: Host, config: JsonObject, servers: string[], usualFile: boolean): string[] {
  const container = isObject(config[host.container]) ? (config[host.container] as JsonObject) : {};
  const mcp = isObject(config.mcp) ? config.mcp : {};
  const projects = isObject(config.projects) ? config.projects : {};
  const notes: string[] = [];
  for (const name of servers) {
    const entry = container[name];
    if (isObject(entry) && entry.disabled === true) {
      notes.push(
        `${name}: its entry has "disabled": true, which turns a server off in the hosts that honour that field; delete that line to be sure ${host.name} starts it.`,
      );
    }
    if (host.id === 'gemini') notes.push(...geminiNotes(name, mcp, config));
    if (host.id === 'claude-code' && usualFile) {
      for (const [project, settings] of Object.entries(projects)) {
        if (isObject(settings) && names(settings.disabledMcpServers).includes(name)) {
          notes.push(`${name}: Claude Code has it disabled in the project ${shown(project)}; enable it there with /mcp.`);
        }
      }
    }
  }
  return notes;
}

/** Gemini CLI's lists: mcp.excluded and mcp.allowed (excludeMCPServers and allowMCPServers at the top before them). */
function geminiNotes(name: string, mcp: JsonObject, config: JsonObject): string[] {
  const notes: string[] = [];
  for (const [list, value] of [
    ['mcp.excluded', mcp.excluded],
    ['excludeMCPServers', config.excludeMCPServers],
  ] as const) {
    if (names(value).includes(name)) notes.push(`${name}: Gemini CLI skips it, as ${list} lists it; take it out of that list to start it.`);
  }
  for (const [list, value] of [
    ['mcp.allowed', mcp.allowed],
    ['allowMCPServers', config.allowMCPServers],
  ] as const) {
    if (Array.isArray(value) && !names(value).includes(name))
      notes.push(`${name}: Gemini CLI starts only the servers ${list} lists, and it does not list this one; add it there to start it.`);
  }
  return notes;
}

/**
 * A line for each of `servers` that Claude Code runs in some project from that project's own entry
 * of the name (its local scope, `projects.<path>.mcpServers` in ~/.claude.json, what `claude mcp add`
 * writes without --scope user) rather than the one setup writes: a local server wins over a user one
 * of its name, so there a changed key or address would not count.
 */
export function shadowedNotes(host: Host, text: string | undefined, servers: string[], usualFile: boolean): string[] {
  const body = text?.replace(/^\uFEFF/, '') ?? '';
  if (host.id !== 'claude-code' || !usualFile || body.trim() === '') return [];
  const config = parseHostJson(host, body) as JsonObject;
  const projects = isObject(config.projects) ? config.projects : {};
  const notes: string[] = [];
  for (const name of servers) {
    for (const [project, settings] of Object.entries(projects)) {
      if (isObject(settings) && isObject(settings.mcpServers) && Object.hasOwn(settings.mcpServers, name)) {
        notes.push(
          `${name}: in the project ${shown(project)} Claude Code runs that project's own ${name} (local scope) instead; ` +
            `remove it there (claude mcp remove --scope local ${name}, in that folder) to have this one run there too.`,
        );
      }
    }
  }
  return notes;
}
