// Only what a request needs from undici: its Pool (api-client.ts dispatches with undici's handler
// API, so not even the request API is loaded). undici's index also loads fetch, WebSocket,
// EventSource, caches, mocks and proxies, which made a server's first call load and compile about
// half a megabyte it never uses.
import type { Pool as PoolType } from 'undici';
import PoolClass from 'undici/lib/dispatcher/pool.js';

export const Pool: typeof PoolType = PoolClass;

// HTTP's reason phrases come from here too: undici loads node:http anyway, and a server's start
// does not (loading it there cost about 2.5 MB of resident memory).
export { STATUS_CODES } from 'node:http';
