// The remote service as an operator pipes it (`npm run -s serve 2>&1 | a-log-shipper`): when what
// reads its log went away, the next log line failed with EPIPE, an uncaught error, whose own log
// line failed the same way, and so on: the service spun a core at full speed and SIGTERM never
// ended it. A log nobody reads now costs nothing but its lines.
import { afterEach, expect, it } from 'vitest';
import { launchService, type ServiceProcess, stopService } from './service-process.js';

let service: ServiceProcess | undefined;
afterEach(async () => {
  if (service) await stopService(service.child, 'SIGKILL');
  service = undefined;
});

it('answers and stops on SIGTERM (exit 0) after the reader of its log has gone', async () => {
  service = launchService({ ENGAGE_BASE_URL: 'https://api.example.com', ENGAGE_LOG_LEVEL: 'info' });
  const url = await service.url;
  service.child.stderr?.destroy();
  for (let i = 0; i < 3; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
  const refused = await fetch(`${url}/mcp`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  expect(refused.status).toBe(401);
  service.child.kill('SIGTERM');
  expect(await service.exit).toBe(0);
});
