export { startSandbox, ALL_SCOPES, READ_SCOPES } from './sandbox.js';
export type { Sandbox, SandboxOptions, SandboxKeys, Fault, FaultKind, CarriedOut, SeenRequest } from './sandbox.js';
export { launchServer, serverEntry, DOMAINS, type DomainName, type LaunchedServer } from './launch.js';
