// What a per-file helper started in beforeAll, read by a test: a clear error if read before.
export function started<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the ${what} starts in beforeAll`);
  return value;
}
