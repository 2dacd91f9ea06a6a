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

export function askHidden(question: string, input: NodeJS.ReadStream, output: NodeJS.WritableStream): Promise<string> {
  output.write(question);
  input.setRawMode(true);
  input.setEncoding('utf8');
  input.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (outcome: () => void) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      outcome();
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return finish(() => resolve(value));
        if (char === '\u0003' || char === '\u0004') return finish(() => reject(new Cancelled('cancelled')));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else if (char >= ' ') value += char;
      }
    };
    input.on('data', onData);
  });
}
