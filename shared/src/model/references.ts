// The catalog as one server offers it: an operation's answers name other operations for the model
// to call (verifyWith, findIdsWith), and the server's settings may leave those out, or a caller's
// OAuth grant may lack their scope. Types only: the server loads this before the catalog, and zod
// with it, is loaded.
import type { Domain, Operation } from './types.js';

/** The fields of an operation that name another operation for the model to call (its id first: `campaign.list (campaign server)`). */
const REFERENCES = ['verifyWith', 'findIdsWith'] as const;

const idOf = (reference: string) => reference.split(' ')[0] as string;
const domainOf = (operationId: string) => operationId.split('.')[0] as string;

/**
 * The catalog as one server offers it: a reference to another operation (verifyWith, findIdsWith)
 * that `callable` says the model cannot call there (left out by ENGAGE_OPERATIONS_ALLOW or
 * ENGAGE_OPERATIONS_DENY) is dropped, so no answer tells the model to use it; the answers fall
 * back to their words without one ("check the current state"). A kept reference carries the API
 * scope it needs, where `scopeOf` knows it, for forGrant.
 */
export function withCallableReferences(
  domain: Domain,
  callable: (operationId: string) => boolean,
  scopeOf: (operationId: string) => string | undefined = () => undefined,
): Domain {
  const offered = new Map<Operation, Operation>();
  for (const op of domain.operations) {
    const present = REFERENCES.filter((field) => op[field] !== undefined);
    if (present.length === 0) {
      offered.set(op, op);
      continue;
    }
    const copy = { ...op };
    const scopes: NonNullable<Operation['referenceScopes']> = {};
    for (const field of present) {
      const id = idOf(op[field]!);
      if (!callable(id)) {
        delete copy[field];
        continue;
      }
      const scope = scopeOf(id);
      if (scope) scopes[field] = scope;
    }
    if (Object.keys(scopes).length > 0) copy.referenceScopes = scopes;
    offered.set(op, copy);
  }
  const own = (op: Operation) => offered.get(op) ?? op;
  return { ...domain, operations: domain.operations.map(own), tools: domain.tools.map((tool) => ({ ...tool, operations: tool.operations.map(own) })) };
}

/**
 * An operation as one caller sees it: where its OAuth grant lacks the scope a reference needs
 * (campaign.send granted, campaign.read not: campaign.progress would be refused), the reference is
 * no call to make; it moves to `notGranted`, for the answers to say who checks and what scope would let the model.
 * `grantDomain`: the grant was made for that domain's endpoint alone, so it says nothing of another domain's reads.
 */
export function forGrant(op: Operation, granted: ReadonlySet<string> | undefined, grantDomain?: string): Operation {
  if (!granted || !op.referenceScopes) return op;
  let copy: Operation | undefined;
  for (const field of REFERENCES) {
    const scope = op.referenceScopes[field];
    const reference = op[field];
    if (!scope || reference === undefined || granted.has(scope)) continue;
    // A grant for one domain's endpoint (/mcp/contact) covers that connection only: another domain's read is another connection's, with its own grant.
    if (grantDomain !== undefined && domainOf(idOf(reference)) !== grantDomain) continue;
    copy ??= { ...op, notGranted: { ...op.notGranted } };
    delete copy[field];
    copy.notGranted![field] = { operation: idOf(reference), scope };
  }
  return copy ?? op;
}
