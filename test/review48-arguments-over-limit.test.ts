// Review 48 (newcomer): contact.import takes up to 10,000 contacts, each with a name of up to 200
// characters and an email of up to 254, so an import the catalog accepts can be over the 4 MiB
// every call's arguments are held to. That refusal said only "the arguments are larger than 4 MiB;
// nothing was sent.", while the README promises every failure says what to do next, and the only
// size the model had been told of (the catalog's 10,000) is the one it had just kept to. It now says
// to send the same work in smaller calls.
import { describe, expect, it } from 'vitest';
import { requestsAtApi, textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const stand = inProcessPerFile('contact');

/** 10,000 contacts, each as long as the catalog allows: about 5 MB of arguments. */
function longestImport(): Array<{ name: string; msisdn: string; email: string }> {
  const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.id`;
  return Array.from({ length: 10_000 }, (_, i) => ({ name: `${'Kontak '.repeat(28)}${i}`.slice(0, 200), msisdn: `6281${String(i).padStart(9, '0')}`, email }));
}

describe('review48: arguments over 4 MiB', () => {
  it('a contact.import the catalog accepts but over 4 MiB is refused, saying to split it into smaller calls; nothing reaches the API', async () => {
    const users = longestImport();
    expect(JSON.stringify({ operationId: 'contact.import', params: { users } }).length).toBeGreaterThan(4 * 1024 * 1024);
    const result = await stand.server.call('contact.import', { users });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('the arguments are larger than 4 MiB; nothing was sent.');
    expect(textOf(result)).toContain('Send the same work in smaller calls');
    expect(requestsAtApi(stand.sandbox, 'contact.import')).toBe(0);
  });
});
