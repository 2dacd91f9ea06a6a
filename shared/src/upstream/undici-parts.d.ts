// undici's own modules that undici-pool.ts loads instead of its index (they have no types of their own).
declare module 'undici/lib/dispatcher/pool.js' {
  const Pool: typeof import('undici').Pool;
  export default Pool;
}
