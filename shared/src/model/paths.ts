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
  const names = new Set(pathParamNames(op.path));
  const path = fillPath(op, params, siblings);
  if (op.method === 'GET' || op.method === 'DELETE') return { path };
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
  const rival = siblings.find((other) => other !== op && routeMatches(other.path, path) && moreSpecific(other.path, op.path));
  if (rival) {
    throw new InputError(`params ${describeIds(op, params)} is not an id: it spells the route of ${rival.id}. Use ${rival.id} for that. Nothing was sent.`, op);
  }
  return path;
}

function describeIds(op: Operation, params: Params): string {
  return pathParamNames(op.path)
    .map((name) => `${name}=${JSON.stringify(params[name])}`)
    .join(', ');
}

/**
 * Does a concrete path fit a template of the catalog (segment by segment)? Literal segments are
 * compared without regard to case: many routers ignore it, so ticketID `Stats` could reach stats.
 */
export function routeMatches(template: string, path: string): boolean {
  const want = template.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return false;
  return want.every((segment, index) => /^\{\w+\}$/.test(segment) || segment.toLowerCase() === have[index]?.toLowerCase());
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
