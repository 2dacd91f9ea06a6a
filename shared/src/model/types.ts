// The catalog's types: what an operation, a tool and a domain are. Imports nothing at run time (zod's
// types only), so every room can name them.
import type { z } from 'zod';

export type Risk = 'safe' | 'confirm' | 'destructive';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Params = Record<string, unknown>;

/** Reads a path of the API for a confirmation preview: the envelope's data (cleaned), or undefined on any failure. */
export type PreviewReader = (path: string) => Promise<unknown>;

/** A preview's reader, and the API's refusal of the key (401: an UpstreamError) if a look-up met one: the write would meet it too. */
export type LookupReader = PreviewReader & { keyRefused?: Error };

/**
 * What this server carried out earlier for an operation, newest first: its params and the API's
 * answer. For facts the API cannot show (the text of a campaign created here).
 */
export type WrittenBefore = (operationId: string) => Array<{ params: Params; data: unknown }>;

export interface Confirmation {
  /** One plain sentence of what will happen, built from the validated params. */
  effect: (params: Params) => string;
  /** What cannot be undone, if anything. */
  irreversible?: string;
  /**
   * Facts the preview looks up (a record's name, recipients, quota). A fact whose look-up failed is
   * left out; the record the preview is about says so instead (catalog.ts `notShown`).
   * Values read from the API go through quote() or plain(): they may be written by customers.
   */
  facts?: (params: Params, read: PreviewReader, written: WrittenBefore) => Promise<Array<Fact | undefined>>;
}

/**
 * One line of a preview's facts. The person's yes is bound to what it showed: when the yes comes
 * back and the line reads otherwise (the campaign's text was edited, its audience grew), nothing
 * runs and the person is asked again. A string is bound whole; `{ text, bound }` shows `text` and
 * binds only `bound`, leaving out what changes on its own (a quota, a count so far): `live()`.
 */
export type Fact = string | { text: string; bound: string };

export interface Operation {
  /** operationId, as the spec and design brief name it. */
  id: string;
  method: HttpMethod;
  /** Path template relative to the base URL, with `{param}` placeholders. */
  path: string;
  /** The key permission this operation needs. */
  scope: string;
  risk: Risk;
  /** One line for the model: what the operation does. */
  summary: string;
  /** Path parameters and body fields, validated before anything is sent. */
  params: z.ZodObject;
  /**
   * The response data is an array of records: it is paged, filtered and projected. idField (kept
   * in every projection) only for the record types the spec shows; other layouts are not known.
   */
  list?: { idField?: string };
  /** Text in the response may be written by end customers (names, messages). */
  customerText?: boolean;
  /** The list operation that shows valid ids, named in a 404 answer. */
  findIdsWith?: string;
  /** The read operation that shows what happened when the outcome of a write is unknown. */
  verifyWith?: string;
  /** What "Done" means for a write the API carries on with after it answers (a send it has only started): said after it. */
  afterDone?: string;
  /** The API scope each of verifyWith and findIdsWith needs, where known (references.ts): an OAuth grant may lack it. */
  referenceScopes?: Partial<Record<'verifyWith' | 'findIdsWith', string>>;
  /**
   * verifyWith or findIdsWith left out for a caller whose OAuth grant lacks its scope (references.ts
   * forGrant): the answers name it with the scope it needs, for the user to check or grant, never as a call to make.
   */
  notGranted?: Partial<Record<'verifyWith' | 'findIdsWith', { operation: string; scope: string }>>;
  /**
   * The MCP Apps view (packages/apps/views.json) that shows this read operation's result in hosts
   * that render MCP Apps. A tool's operations name one view at most; action tools get the
   * confirmation card without naming it.
   */
  view?: string;
  /** How a confirmation request describes this operation (confirm and destructive only). */
  confirmation?: Confirmation;
  /**
   * How many messages to customers this write sends (a campaign's recipients, one reply): the
   * send caps count them and quiet hours hold them back. Undefined when the count cannot be read.
   */
  messages?: (params: Params, read: PreviewReader) => Promise<number | undefined>;
  /**
   * Where only some params send a message (a ticket opened with a first message): whether these
   * do. Without it, every call of an operation with `messages` does. Asked with no look-up.
   */
  sendsMessage?: (params: Params) => boolean;
  /**
   * The scope of messaging customers, where this operation's own scope does not say it (a ticket
   * opened with a first message needs inbox.manage of the API): an OAuth grant must hold it too
   * for params that send a message, so a connection not allowed to message customers cannot.
   */
  messageScope?: string;
}

export type ToolKind = 'read' | 'action';

export interface ToolSpec {
  name: string;
  title: string;
  kind: ToolKind;
  operations: Operation[];
}

export interface Domain {
  name: string;
  title: string;
  operations: Operation[];
  tools: ToolSpec[];
}

/**
 * What an action's answer says happened (structuredContent.outcome; the MCP Apps card reads it):
 * carried out, refused (nothing was done), unknown (it may have been), declined by the person, or
 * a preview waiting for their yes. call/outcomes.ts holds every text that says it.
 */
export type Outcome = 'done' | 'refused' | 'unknown' | 'declined' | 'preview';

/** How far a call got: nothing sent yet, the request sent, or the API's answer in hand. */
export type CallStage = 'before' | 'sent' | 'answered';
