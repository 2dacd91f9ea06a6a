// Questions in a terminal. The key is read with the terminal's echo off: nothing of it is shown.
import { createInterface } from 'node:readline/promises';

export async function ask(question: string, input: NodeJS.ReadStream, output: NodeJS.WritableStream): Promise<string> {
  const lines = createInterface({ input, output, terminal: true });
  try {
    return (await lines.question(question)).trim();
  } finally {
    lines.close();
  }
}

export class Cancelled extends Error {}

const ESC = '\x1b';

/**
 * What a raw terminal sends, turned into a key. Escape sequences are keys, not text: cursor keys
 * (arrows, Home, End, their modified and application-mode forms) move nothing, since the cursor
 * is never shown; Delete removes like Backspace; a bracketed paste inserts only what was pasted,
 * its newlines included in nothing. A sequence may be split across reads, so the state is kept.
 */
export class HiddenLine {
  value = '';
  private state: 'text' | 'escape' | 'csi' | 'ss3' = 'text';
  private parameters = '';
  private pasting = false;

  /** Takes the next characters; says whether the person pressed Enter or cancelled. */
  feed(chunk: string): 'enter' | 'cancel' | undefined {
    for (const char of chunk) {
      const outcome = this.take(char);
      if (outcome) return outcome;
    }
    return undefined;
  }

  private take(char: string): 'enter' | 'cancel' | undefined {
    if (this.state === 'escape') this.afterEscape(char);
    else if (this.state === 'csi') this.inSequence(char);
    else if (this.state === 'ss3') this.state = 'text';
    else if (char === ESC) this.state = 'escape';
    else if (this.pasting) {
      if (char >= ' ' && char !== '\x7f') this.value += char;
    } else return this.typed(char);
    return undefined;
  }

  private typed(char: string): 'enter' | 'cancel' | undefined {
    if (char === '\r' || char === '\n') return 'enter';
    if (char === '\x03' || char === '\x04') return 'cancel';
    if (char === '\x7f' || char === '\b') this.value = this.value.slice(0, -1);
    else if (char === '\x15') this.value = '';
    else if (char >= ' ') this.value += char;
    return undefined;
  }

  private afterEscape(char: string): void {
    this.parameters = '';
    if (char === '[') this.state = 'csi';
    else if (char === 'O') this.state = 'ss3';
    // ESC ESC: still in an escape. ESC and another key (Alt+key): dropped.
    else if (char !== ESC) this.state = 'text';
  }

  /** CSI: parameter and intermediate bytes, then one final byte. */
  private inSequence(char: string): void {
    if (char >= ' ' && char <= '?') {
      this.parameters += char;
      return;
    }
    this.state = 'text';
    if (char !== '~') return;
    const code = this.parameters.split(';')[0];
    if (code === '200') this.pasting = true;
    else if (code === '201') this.pasting = false;
    else if (code === '3' && !this.pasting) this.value = this.value.slice(0, -1);
  }
}

export function askHidden(question: string, input: NodeJS.ReadStream, output: NodeJS.WritableStream): Promise<string> {
  // Raw before the question shows, so nothing typed at once is echoed or read as a signal.
  input.setRawMode(true);
  output.write(question);
  input.setEncoding('utf8');
  input.resume();
  return new Promise((resolve, reject) => {
    const line = new HiddenLine();
    const finish = (outcome: () => void) => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      outcome();
    };
    const onData = (chunk: string) => {
      const outcome = line.feed(chunk);
      if (outcome === 'enter') finish(() => resolve(line.value));
      else if (outcome === 'cancel') finish(() => reject(new Cancelled('cancelled')));
    };
    const onEnd = () => finish(() => reject(new Cancelled('cancelled')));
    input.on('data', onData);
    input.on('end', onEnd);
  });
}
