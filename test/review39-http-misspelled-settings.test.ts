// The README says the service reads ENGAGE_READ_ONLY, ENGAGE_CONFIRM and the guardrails "as for the
// stdio servers", and a stdio server names a setting misspelled within two letters (ENGAGE_READONLY)
// at start. The service said nothing of one: ENGAGE_READONLY=true left every tenant's writes on,
// ENGAGE_CAP_MESSAGE_PER_DAY no cap, with no line in its log. It now names each such name at start,
// with the setting meant, among its own settings too (ENGAGE_HTTP_MAX_CONCURENT_PER_KEY).
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { HTTP_SETTING_NAMES } from '../packages/http/src/settings.js';
import { launchService, stopService, type ServiceProcess } from './service-process.js';

const started: ServiceProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map(({ child }) => stopService(child)));
});

/** The built service's log up to the line that it listens. */
async function startLog(env: Record<string, string>): Promise<string> {
  const service = launchService({ ENGAGE_BASE_URL: 'https://api.example.com', ...env });
  started.push(service);
  await service.url;
  return service.stderr.join('');
}

it('names each misspelled setting, with the one meant, and still starts', async () => {
  const log = await startLog({ ENGAGE_READONLY: 'true', ENGAGE_CAP_MESSAGE_PER_DAY: '5', ENGAGE_HTTP_MAX_CONCURENT_PER_KEY: '2' });
  expect(log).toContain('ENGAGE_READONLY is not a setting of this server and was ignored: did you mean ENGAGE_READ_ONLY?');
  expect(log).toContain('ENGAGE_CAP_MESSAGE_PER_DAY is not a setting of this server and was ignored: did you mean ENGAGE_CAP_MESSAGES_PER_DAY?');
  expect(log).toContain('ENGAGE_HTTP_MAX_CONCURENT_PER_KEY is not a setting of this server and was ignored: did you mean ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY?');
});

it('takes none of its own settings for a misspelling', async () => {
  const log = await startLog({
    ENGAGE_HTTP_HOST: '127.0.0.1',
    ENGAGE_ALLOWED_HOSTS: 'localhost',
    ENGAGE_ALLOWED_ORIGINS: 'localhost',
    ENGAGE_HTTP_MAX_BODY_BYTES: '100000',
    ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY: '8',
    ENGAGE_HTTP_MAX_CONNECTIONS: '100',
    ENGAGE_HTTP_MAX_SESSIONS: '100',
    ENGAGE_HTTP_MAX_SESSIONS_PER_KEY: '10',
    ENGAGE_HTTP_REQUEST_TIMEOUT_MS: '60000',
    ENGAGE_HTTP_DRAIN_TIMEOUT_MS: '1000',
    ENGAGE_HTTP_DRAIN_DELAY_MS: '0',
    ENGAGE_TRUSTED_PROXY_HOPS: '0',
    ENGAGE_OAUTH_KEY_MODE: 'on',
    ENGAGE_READ_ONLY: 'false',
    ENGAGE_CAP_MESSAGES_PER_DAY: '10',
    ENGAGE_CAP_RECIPIENTS_PER_SEND: '10',
    ENGAGE_LOG_LEVEL: 'info',
  });
  expect(log).not.toContain('is not a setting');
});

it('knows every name the settings module reads', () => {
  const code = readFileSync('packages/http/src/settings.ts', 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const read = new Set(code.match(/\bENGAGE_[A-Z]+(?:_[A-Z]+)*\b/g));
  expect([...read].filter((name) => !HTTP_SETTING_NAMES.includes(name))).toEqual([]);
});
