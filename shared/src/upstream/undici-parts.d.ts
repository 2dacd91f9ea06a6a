// undici's own modules that undici-pool.ts loads instead of its index (they have no types of their own).
declare module 'undici/lib/dispatcher/pool.js' {
  const Pool: typeof import('undici').Pool;
  export default Pool;
}
declare module 'undici/lib/dispatcher/dispatcher.js' {
  const Dispatcher: typeof import('undici').Dispatcher;
  export default Dispatcher;
}
declare module 'undici/lib/api/index.js' {
  const api: Record<string, unknown>;
  export default api;
}
