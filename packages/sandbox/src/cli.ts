#!/usr/bin/env node
// `npm run sandbox`: the local Tenant API. The first stdout line is JSON (baseUrl and keys) for
// scripts; a short summary for people follows.
import { parseArgs } from 'node:util';
import { startSandbox } from './sandbox.js';

function number(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) {
    process.stderr.write(`sandbox: --${name} must be a whole number of at least ${min}\n`);
    process.exit(2);
  }
  return parsed;
}

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'rate-limit': { type: 'string' },
    'extra-contacts': { type: 'string' },
    'extra-tickets': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(
    'Usage: engage-sandbox [--port N (0: any free port)] [--rate-limit requests-per-minute-per-key] [--extra-contacts N] [--extra-tickets N]\n',
  );
  process.exit(0);
}

const sandbox = await startSandbox({
  port: number(values.port, 'port', 0) ?? 0,
  rateLimit: number(values['rate-limit'], 'rate-limit', 1),
  extraContacts: number(values['extra-contacts'], 'extra-contacts', 0),
  extraTickets: number(values['extra-tickets'], 'extra-tickets', 0),
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
