// One seeded random generator for the fuzz tests: the same sequence on every platform and run, so
// a failure names its seed and can be replayed.

/** mulberry32: small, seeded; `next` in [0, 1), `int` below a bound, `pick` one of, `chance` true with probability p. */
export function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (below: number) => Math.floor(next() * below);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick, chance: (p: number) => next() < p };
}
export type Seeded = ReturnType<typeof seeded>;
