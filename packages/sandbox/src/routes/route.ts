// What a route is (operationId, method, path, scope, handler), and the small helpers every
// domain's handlers share.
import type { TenantState } from '../data.js';
import { notFound } from '../failure.js';
import type { SandboxState } from '../state.js';

export interface HandlerContext {
  /** The tenant of the key that made the request. */
  tenant: TenantState;
  /** Path parameters, decoded. */
  params: Record<string, string>;
  /** The JSON body of a POST or PUT; {} otherwise. */
  body: Record<string, unknown>;
  sandbox: SandboxState;
}

/** Returns the answer's `data`, or throws an ApiFailure. */
export type Handler = (ctx: HandlerContext) => unknown;

export interface Route {
  operationId: string;
  method: string;
  segments: string[];
  scope: string;
  /** Carried out (and so recorded in carriedOut()) when it succeeds: every method but GET. */
  mutating: boolean;
  handler: Handler;
}

/** A route at `path`, whose `{name}` segments are parameters. */
export const route = (operationId: string, method: string, path: string, scope: string, handler: Handler): Route => ({
  operationId,
  method,
  segments: path.split('/'),
  scope,
  mutating: method !== 'GET',
  handler,
});

export const now = () => new Date().toISOString();

/** The item whose `field` is `value`, or a 404 naming `what`. */
export function find<T>(items: T[], field: keyof T, value: string, what: string): T {
  const item = items.find((candidate) => candidate[field] === value);
  if (!item) throw notFound(what);
  return item;
}

export const quotaLeft = (tenant: TenantState) => tenant.messageQuota.total - tenant.messageQuota.used;
