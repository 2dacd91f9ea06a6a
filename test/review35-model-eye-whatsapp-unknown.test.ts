// Review 35 (the model's eye: tasks done only from what the tools say). A WhatsApp send whose
// outcome is unknown told the model to check billing.quota because "each message sent uses one of
// the message quota", which the spec never says of this send (only campaign.send is said to use
// quota): an unchanged quota would read as "not sent", and the model would send it again. Now the
// answer says an unchanged quota proves nothing, and to ask the user before sending again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => sandbox?.close());

describe('review35: a WhatsApp send whose outcome is unknown', () => {
  it('is not said to be shown for certain by the message quota, and the model is told to ask before sending again', async () => {
    const confirmNone = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none' } });
    try {
      sandbox.injectFault({ kind: 'reset-after', operationId: 'channel.whatsapp.send' });
      const result = await confirmNone.call('channel.whatsapp.send', { msisdn: '6281299990035', message: 'Halo' });
      expect(structuredOf(result).outcome, textOf(result)).toBe('unknown');
      expect(textOf(result)).not.toMatch(/each message sent uses one/);
      expect(textOf(result)).toMatch(/check with billing\.quota .*an unchanged quota does not mean it was not sent: ask the user before sending it again/);
    } finally {
      await confirmNone.close();
    }
  });
});
