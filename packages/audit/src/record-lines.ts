// The audit record read line by line, a chunk at a time: a record of years (or a hostile file) may
// be longer than V8's longest string (512 MB), which reading it whole refused ("Cannot create a
// string longer than 0x1fffffe8 characters"), and one line may be any length. Lines are split as
// bytes (a newline byte is never part of a longer UTF-8 character) and each is decoded on its own,
// strictly: the servers write UTF-8 only, and a decoder that replaced a byte that is none with
// U+FFFD let a line holding that character have it replaced by any such byte and still verify.
import { closeSync, lstatSync, openSync, readSync } from 'node:fs';

/**
 * Far longer than any line the servers write: a write's params are summarized in a few KB (an earlier
 * version listed every field, a line up to about three times the 4 MiB its arguments may have). A
 * longer line is not read on: it stands as its first characters and a mark no line of the record ends with.
 * Counted in bytes.
 */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;
/** How much of an over-long line or one that is not UTF-8 is kept (bytes), to be shown as a line that is not one of the record. */
const KEPT_OF_LONG_LINE = 1024;
export const LONG_LINE_MARK = '…[line longer than 64 MiB, not read on]';
/** Ends a line whose bytes are not UTF-8 (shown with U+FFFD for them): no line of the record ends so. */
export const NOT_UTF8_MARK = '…[line not UTF-8 text]';
const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** The record's lines without their line ends (a CRLF copy reads the same); a last empty line is none. */
export function* recordLines(file: string): Generator<string> {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    const line = new LineBuilder();
    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      const bytes = buffer.subarray(0, read);
      let from = 0;
      // Only the new bytes are searched for line ends: the line so far is never searched again.
      for (let end = bytes.indexOf(NEWLINE); end >= 0; end = bytes.indexOf(NEWLINE, from)) {
        line.add(bytes.subarray(from, end));
        yield line.take();
        from = end + 1;
      }
      // The buffer is read into again: what is kept of it is copied.
      line.add(Buffer.from(bytes.subarray(from)));
    }
    if (!line.empty) yield line.take();
  } finally {
    closeSync(fd);
  }
}

/** One line as its bytes arrive, kept whole up to MAX_LINE_CHARS bytes, and decoded when it ends. */
class LineBuilder {
  private pieces: Buffer[] = [];
  private length = 0;
  private long = false;

  get empty(): boolean {
    return this.length === 0;
  }

  add(piece: Buffer): void {
    this.length += piece.length;
    if (this.long) return;
    this.pieces.push(piece);
    if (this.length > MAX_LINE_CHARS) {
      this.pieces = [Buffer.concat(this.pieces).subarray(0, KEPT_OF_LONG_LINE)];
      this.long = true;
    }
  }

  take(): string {
    const bytes = this.pieces.length === 1 ? (this.pieces[0] as Buffer) : Buffer.concat(this.pieces);
    const long = this.long;
    this.pieces = [];
    this.length = 0;
    this.long = false;
    if (long) return `${lenientUtf8.decode(bytes)}${LONG_LINE_MARK}`;
    let text: string;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      return `${lenientUtf8.decode(bytes.subarray(0, KEPT_OF_LONG_LINE))}${NOT_UTF8_MARK}`;
    }
    return text.endsWith('\r') ? text.slice(0, -1) : text;
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
