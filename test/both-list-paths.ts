// The contact server once for each way a list is read, over one sandbox for the test file: tenant
// A's list past 1 MiB (read as it arrives), tenant B's small (read whole). `seed` changes each
// tenant's contacts first (a name with a hidden character, a field under another name).
import { afterAll, beforeAll } from 'vitest';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';

export type Tenant = 'A' | 'B';

export interface BothListPaths {
  readonly sandbox: Sandbox;
  /** Tenant A's contacts: a list past 1 MiB. */
  readonly large: LaunchedServer;
  /** Tenant B's contacts: a small list. */
  readonly small: LaunchedServer;
}

export function bothListPathsPerFile(seed: (sandbox: Sandbox, tenant: Tenant) => void): BothListPaths {
  const rig = {} as { sandbox: Sandbox; large: LaunchedServer; small: LaunchedServer };
  beforeAll(async () => {
    rig.sandbox = await startSandbox({ extraContacts: 12_000 });
    for (const tenant of ['A', 'B'] as const) seed(rig.sandbox, tenant);
    const env = (key: string) => ({ ENGAGE_BASE_URL: rig.sandbox.baseUrl, ENGAGE_API_KEY: key });
    [rig.large, rig.small] = await Promise.all([
      launchServer('contact', env(rig.sandbox.keys.full)),
      launchServer('contact', env(rig.sandbox.keys.otherTenant)),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([rig.large?.close(), rig.small?.close()]);
    await rig.sandbox?.close();
  });
  return rig;
}

/** For describe.each: each way, its server and its tenant. */
export const LIST_PATHS = [
  ['a small list (read whole)', (rig: BothListPaths) => rig.small, 'B'],
  ['a list past 1 MiB (read as it arrives)', (rig: BothListPaths) => rig.large, 'A'],
] as const;
