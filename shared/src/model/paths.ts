// Path building. A model may pass any string as an id; none of them may make a request land on
// another operation's route (ticketID "stats" must not reach inbox.ticket.stats).
// No zod here (nor anything that imports it): this module is on the start-up path.
import type { Operation, Params } from './types.js';
import { InputError } from './errors.js';

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
}

/** Splits validated params into the path's parameters and the request body. */
export function buildRequest(op: Operation, params: Params, siblings: readonly Operation[]): { path: string; body?: Params } {
  const path = fillPath(op, params, siblings);
  if (op.method === 'GET' || op.method === 'DELETE') return { path };
  const names = new Set(pathParamNames(op.path));
  const body: Params = {};
  for (const [key, value] of Object.entries(params)) {
    if (!names.has(key) && value !== undefined) body[key] = value;
  }
  return { path, body };
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function fillPath(op: Operation, params: Params, siblings: readonly Operation[]): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (typeof value !== 'string' || value === '' || value === '.' || value === '..') {
      throw new InputError(`params.${name} must be a non-empty id`, op);
    }
    // Half of a surrogate pair is no character: it cannot be written in a URL.
    if (LONE_SURROGATE.test(value)) throw new InputError(`params.${name} holds half of a character (a lone UTF-16 surrogate): it is not an id`, op);
    return encodeURIComponent(value);
  });
  const rival = path === op.path ? fixedRival(op, siblings) : rivalOf(op, path, siblings);
  if (rival) {
    // Another method's route (a delete spelling an import) is nothing the model meant: not named as what to use.
    const next =
      rival.method === op.method ? `. Use ${rival.id} for that.` : `, so it cannot name a record for ${op.id}: check it, or ask the user for the right one.`;
    throw new InputError(`params ${describeIds(op, params)} is not an id: it spells the route of ${rival.id}${next} Nothing was sent.`, op);
  }
  return path;
}

/** Another operation of the catalog whose route `path` (filled in for `op`) reaches, where a router would prefer it. */
function rivalOf(op: Operation, path: string, siblings: readonly Operation[]): Operation | undefined {
  return siblings.find((other) => other !== op && routeMatches(other, path) && moreSpecific(other.path, op.path));
}

/** A path with no parameter in it is the same every call, and so is its rival: looked for once per catalog. */
const fixedRivals = new WeakMap<Operation, { siblings: readonly Operation[]; rival: Operation | undefined }>();

function fixedRival(op: Operation, siblings: readonly Operation[]): Operation | undefined {
  const known = fixedRivals.get(op);
  if (known?.siblings === siblings) return known.rival;
  const rival = rivalOf(op, op.path, siblings);
  fixedRivals.set(op, { siblings, rival });
  return rival;
}

/** A catalog template's segments: each literal one lowercased, a parameter undefined. */
const templates = new WeakMap<{ path: string }, Array<string | undefined>>();

function templateOf(op: { path: string }): Array<string | undefined> {
  let segments = templates.get(op);
  if (!segments) {
    segments = op.path.split('/').map((segment) => (/^\{\w+\}$/.test(segment) ? undefined : segment.toLowerCase()));
    templates.set(op, segments);
  }
  return segments;
}

function describeIds(op: Operation, params: Params): string {
  return pathParamNames(op.path)
    .map((name) => `${name}=${JSON.stringify(params[name])}`)
    .join(', ');
}

/**
 * Does a concrete path fit an operation's template (segment by segment)? Literal segments are
 * compared without regard to case: many routers ignore it, so ticketID `Stats` could reach stats.
 */
export function routeMatches(op: { path: string }, path: string): boolean {
  const template = templateOf(op);
  const have = path.split('/');
  return template.length === have.length && template.every((segment, index) => segment === undefined || segment === have[index]?.toLowerCase());
}

/** A router prefers literal segments over parameters, left to right. */
function moreSpecific(candidate: string, own: string): boolean {
  const a = candidate.split('/');
  const b = own.split('/');
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const aLiteral = !/^\{\w+\}$/.test(a[index] as string);
    const bLiteral = !/^\{\w+\}$/.test(b[index] as string);
    if (aLiteral !== bLiteral) return aLiteral;
  }
  return false;
}
