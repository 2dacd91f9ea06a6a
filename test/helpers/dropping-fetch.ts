// A fetch for an MCP client whose tools/call POSTs can each be dropped (their connection closed) the
// way a client that just goes away drops them: its own notifications/cancelled is never sent.

/** `drop(n)` closes the connection of the n-th tools/call POST (from 0). */
export function droppingFetch(): { fetch: typeof fetch; drop(index: number): void } {
  const calls: AbortController[] = [];
  const droppable = ((input: string | URL | Request, init?: RequestInit) => {
    const isCall = init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"tools/call"');
    if (!isCall) return fetch(input, init);
    const drop = new AbortController();
    calls.push(drop);
    return fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, drop.signal]) : drop.signal });
  }) as typeof fetch;
  return { fetch: droppable, drop: (index) => calls[index]?.abort() };
}
