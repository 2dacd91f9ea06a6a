// Only what a request needs from undici: its Pool and the request API on it. undici's index also
// loads fetch, WebSocket, EventSource, caches, mocks and proxies, which made a server's first call
// load and compile about half a megabyte it never uses. This is what that index does for a Pool.
import type { Pool as PoolType } from 'undici';
import RequestApi from 'undici/lib/api/index.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';

Object.assign(Dispatcher.prototype, RequestApi);

export const Pool: typeof PoolType = PoolClass;
