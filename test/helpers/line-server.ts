// A built server over stdio spoken to line by line, for the tests about the process itself (its
// signals, its stopping, what it does while a question to the person is open), where an SDK client
// would hide what they look at.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

type Message = Record<string, any>;

/** `env` beside PATH; `onAsk` answers the server's elicitation/create questions (the result sent back). */
export function lineServer(domain: string, env: Record<string, string>, onAsk?: (question: Message) => Promise<unknown>) {
  const child = spawn(process.execPath, [`packages/${domain}/dist/index.js`], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => {
    log += chunk.toString('utf8');
  });
  const answers = new Map<number, (message: Message) => void>();
  const write = (message: unknown) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...(message as object) })}\n`);
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Message;
    if (message.method === 'elicitation/create' && onAsk) void onAsk(message).then((result) => write({ id: message.id, result }));
    else if (message.method === undefined) answers.get(message.id)?.(message);
  });
  let id = 0;
  const request = (method: string, params: unknown) =>
    new Promise<Message>((resolve) => {
      answers.set(++id, resolve);
      write({ id, method, params });
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  /** initialize (2025-06-18, declaring elicitation when it can answer) and initialized. */
  const open = async () => {
    await request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: onAsk ? { elicitation: {} } : {},
      clientInfo: { name: 'line-server', version: '0' },
    });
    write({ method: 'notifications/initialized' });
  };
  return { child, request, exited, open, log: () => log };
}
