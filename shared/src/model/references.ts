// The catalog as one server offers it: an operation's answers name other operations for the model
// to call (verifyWith, findIdsWith), and the server's settings may leave those out. Types only:
// the server loads this before the catalog, and zod with it, is loaded.
import type { Domain, Operation } from './types.js';

/** The fields of an operation that name another operation for the model to call (its id first: `campaign.list (campaign server)`). */
const REFERENCES = ['verifyWith', 'findIdsWith'] as const;

/**
 * The catalog as one server offers it: a reference to another operation (verifyWith, findIdsWith)
 * that `callable` says the model cannot call there (left out by ENGAGE_OPERATIONS_ALLOW or
 * ENGAGE_OPERATIONS_DENY) is dropped, so no answer tells the model to use it; the answers fall
 * back to their words without one ("check the current state").
 */
export function withCallableReferences(domain: Domain, callable: (operationId: string) => boolean): Domain {
  const offered = new Map<Operation, Operation>();
  for (const op of domain.operations) {
    const dropped = REFERENCES.filter((field) => op[field] !== undefined && !callable(op[field]!.split(' ')[0] as string));
    if (dropped.length === 0) {
      offered.set(op, op);
      continue;
    }
    const copy = { ...op };
    for (const field of dropped) delete copy[field];
    offered.set(op, copy);
  }
  const own = (op: Operation) => offered.get(op) ?? op;
  return { ...domain, operations: domain.operations.map(own), tools: domain.tools.map((tool) => ({ ...tool, operations: tool.operations.map(own) })) };
}
