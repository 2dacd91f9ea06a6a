#!/usr/bin/env node
// `npm run sandbox`: the local Tenant API. The first stdout line is JSON (baseUrl and keys) for
// scripts; a short summary for people follows.
import { parseArgs } from 'node:util';
import { startSandbox } from './sandbox.js';

const USAGE = 'Usage: engage-sandbox [--port N (0: any free port)] [--rate-limit requests-per-minute-per-key] [--extra-contacts N] [--extra-tickets N]\n';

/** A mistake in how it was started: one line saying what, then the usage; never a stack trace. */
function refuse(message: string): never {
  process.stderr.write(`sandbox: ${message}\n${USAGE}`);
  process.exit(2);
}

function number(value: string | undefined, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    refuse(`--${name} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`}`);
  }
  return parsed;
}

function readFlags() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        'rate-limit': { type: 'string' },
        'extra-contacts': { type: 'string' },
        'extra-tickets': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    // parseArgs' own words ("Unknown option '--rate'"), without its stack.
    return refuse(error instanceof Error ? error.message : String(error));
  }
}

const values = readFlags();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

// A script that reads the first line and closes the pipe has what it needs: the sandbox goes on serving.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

const port = number(values.port, 'port', 0, 65_535) ?? 0;
const sandbox = await startSandbox({
  port,
  rateLimit: number(values['rate-limit'], 'rate-limit', 1),
  extraContacts: number(values['extra-contacts'], 'extra-contacts', 0),
  extraTickets: number(values['extra-tickets'], 'extra-tickets', 0),
}).catch((error: NodeJS.ErrnoException) => {
  const why = error.code === 'EADDRINUSE' ? 'it is in use; choose another, or --port 0 for any free one' : (error.code ?? error.message);
  process.stderr.write(`sandbox: cannot listen on 127.0.0.1:${port}: ${why}\n`);
  return process.exit(1);
});
process.stdout.write(`${JSON.stringify({ baseUrl: sandbox.baseUrl, keys: sandbox.keys })}\n`);
process.stdout.write(
  [
    '',
    `Sandbox Tenant API listening on ${sandbox.baseUrl} (loopback only).`,
    `Tenant A: ${sandbox.tenant('A').name}; tenant B: ${sandbox.tenant('B').name}.`,
    'Keys: full (every scope, tenant A), readOnly (read scopes), expired, revoked, otherTenant (tenant B).',
    `Try: ENGAGE_BASE_URL=${sandbox.baseUrl} ENGAGE_API_KEY=<full key> node packages/contact/dist/index.js`,
    'Ctrl-C stops it.',
    '',
  ].join('\n'),
);
const stop = () => void sandbox.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
