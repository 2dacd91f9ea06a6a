// Two hosts open on one state folder (two stdio channel servers, ENGAGE_CONFIRM=none), both asked for
// exactly the same write at about the same moment (bench/chaos.ts seed 6, "twin" calls): the second
// claimed it once the first had been carried out, sent it again, and answered a plain "Done", so
// neither model was told the customer now has it twice. A write that needs no yes may be repeated
// once the first has ended (README), but the repeat's answer now says the same write also went out,
// when and from where; as a repeat after an unknown outcome already did.
import { expect, it } from 'vitest';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { SEND, callSend, channelsOnStateFoldersPerFile } from './helpers/stdio-channel.js';

const folders = channelsOnStateFoldersPerFile('review39-twin-done');

it('the same write that needs no yes, sent again by another server on the state folder, says the customer now has it twice', async () => {
  const dir = folders.stateDir();
  const [one, two] = await Promise.all([folders.launched(dir), folders.launched(dir)]);
  const params = { msisdn: '6281377700041', message: 'Pesanan Anda sudah dikirim' };
  const first = await callSend(one!, { params });
  expect(textOf(first)).toMatch(/^Done: /);
  expect(textOf(first)).not.toMatch(/twice/);
  const second = await callSend(two!, { params });
  expect(countCarriedOut(folders.sandbox, SEND)).toBe(2);
  expect(textOf(second)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
  expect(textOf(second)).toMatch(
    /Exactly this channel\.whatsapp\.send was also sent by this server or another one sharing its state directory \(another host, or before a restart\) at \S+, and it was carried out: the customer now has it twice\. Tell the user\./,
  );
  expect((structuredOf(second) as { notes?: string[] }).notes?.join(' ')).toMatch(/now has it twice/);
});
