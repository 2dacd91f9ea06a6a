// Which reader takes a response body. A list read reads its body as it arrives once it is large
// (stream-list.ts), so 200,000 records never sit in memory whole; everything else is read whole.
// The stream reader is loaded on the first list read, so a server's start does not pay for it.
import type { Redact } from '../safe/redact.js';
import type { ListShape } from '../safe/render.js';
import type { BodySink } from './api-client.js';

let streamList: Promise<typeof import('./stream-list.js')> | undefined;

/** `redact`: the caller's key redactor, which search and projection must never see past. */
export async function listBodyReaderFor(list: { idField?: string } | undefined, shape: ListShape, redact: Redact): Promise<(() => BodySink) | undefined> {
  if (!list) return undefined;
  // Imported once; every later list read reuses the module rather than asking the loader again.
  const { listBodyReader, STREAM_THRESHOLD_BYTES } = await (streamList ??= import('./stream-list.js'));
  return listBodyReader(shape, list.idField, STREAM_THRESHOLD_BYTES, redact);
}
