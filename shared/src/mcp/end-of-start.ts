// Where a server's start ends, between its bin and its code. The launcher (scripts/launcher.ts)
// holds V8's optimizing compiler back while the bundle starts, and leaves here what lets it go;
// the stdio entry ends the start on the first tool call, the launcher a second after the start
// at the latest. Outside the launcher (tests, remote mode) there is nothing to end.
const END_OF_START = Symbol.for('engage-mcp.end-of-start');
type Holder = { [END_OF_START]?: () => void };

/** Leaves `end` to be called when the start ends (once). */
export function onEndOfStart(end: () => void): void {
  (globalThis as Holder)[END_OF_START] = end;
}

/** Ends the start, if something waits for its end. */
export function endOfStart(): void {
  const holder = globalThis as Holder;
  const end = holder[END_OF_START];
  delete holder[END_OF_START];
  end?.();
}
