// The audit record read line by line, a chunk at a time: a record of years (or a hostile file) may
// be longer than V8's longest string (512 MB), which reading it whole refused ("Cannot create a
// string longer than 0x1fffffe8 characters"), and one line may be any length.
import { closeSync, lstatSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/**
 * Far longer than any line the servers write: a write's params are summarized in a few KB (an earlier
 * version listed every field, a line up to about three times the 4 MiB its arguments may have). A
 * longer line is not read on: it stands as its first characters and a mark no line of the record ends with.
 */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;
/** How much of an over-long line is kept, to be shown as a line that is not one of the record. */
const KEPT_OF_LONG_LINE = 1024;
export const LONG_LINE_MARK = '…[line longer than 64 MiB, not read on]';
const CHUNK_BYTES = 1024 * 1024;

/** The record's lines without their line ends (a CRLF copy reads the same); a last empty line is none. */
export function* recordLines(file: string): Generator<string> {
  const fd = openSync(file, 'r');
  try {
    const decoder = new StringDecoder('utf8');
    const buffer = Buffer.alloc(CHUNK_BYTES);
    const line = new LineBuilder();
    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      const text = read === 0 ? decoder.end() : decoder.write(buffer.subarray(0, read));
      let from = 0;
      // Only the new text is searched for line ends: the line so far is never searched again.
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', from)) {
        line.add(text.slice(from, end));
        yield line.take();
        from = end + 1;
      }
      line.add(text.slice(from));
      if (read === 0) break;
    }
    if (!line.empty) yield line.take();
  } finally {
    closeSync(fd);
  }
}

/** One line as its pieces arrive, kept whole up to MAX_LINE_CHARS. */
class LineBuilder {
  private pieces: string[] = [];
  private length = 0;
  private long = false;

  get empty(): boolean {
    return this.length === 0;
  }

  add(piece: string): void {
    this.length += piece.length;
    if (this.long) return;
    this.pieces.push(piece);
    if (this.length > MAX_LINE_CHARS) {
      this.pieces = [this.pieces.join('').slice(0, KEPT_OF_LONG_LINE), LONG_LINE_MARK];
      this.long = true;
    }
  }

  take(): string {
    const text = this.pieces.join('');
    this.pieces = [];
    this.length = 0;
    const long = this.long;
    this.long = false;
    return long || !text.endsWith('\r') ? text : text.slice(0, -1);
  }
}

/**
 * The servers never read or write the record through a symbolic link, nor keep it in anything but
 * a regular file: where the record is found by default (not named by the person), anything else is
 * said, not read (a FIFO planted there would hold the command forever).
 */
export function defaultRecordProblem(file: string): string | undefined {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(file);
  } catch {
    return undefined; // Missing: reading it says so.
  }
  if (stat.isSymbolicLink())
    return `${file} is a symbolic link, which the servers never write through: they did not write what it points to there. Look at it (ls -l), then name the file to read it anyway`;
  if (!stat.isFile()) return `${file} is not a regular file, so the servers did not write it: name the file to read it anyway`;
  return undefined;
}
