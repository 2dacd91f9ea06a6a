// Review 28e: the README says ENGAGE_STATE_DIR is an absolute path (a relative one is refused at
// start) and that its default $XDG_STATE_HOME/engage-mcp is used only when that is absolute. But
// the default's other branch took HOME as it stood: a server started with HOME set to a relative
// path (HOME=home in a container's env, a service unit's Environment=) kept its state in
// <its working folder>/home/.local/state/engage-mcp (and HOME set empty, in
// <its working folder>/.local/state/engage-mcp: os.homedir() answers an empty HOME as it stands), a different folder for each working folder the
// host starts it in (so the daily cap and idempotency keys were not shared by the servers of one
// machine) and inside whatever folder that was (a project the user has open). A relative HOME is
// now passed over as a relative XDG_STATE_HOME is: the home folder is the user's passwd entry's,
// and where there is none, writes are refused before anything is sent, saying to set
// ENGAGE_STATE_DIR, as with no HOME at all. The audit command's default is the same folder.
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serverEntry } from '../packages/sandbox/src/index.js';
import { defaultStateDir } from '../shared/src/model/config.js';
import { expectWriteRefusedForNoHome, hasSetpriv, homelessArgs, homelessRigPerFile } from './homeless.js';

const rig = homelessRigPerFile('review28e-relative-home-');

describe('the default state directory with HOME set to a relative path', () => {
  it('is not a folder relative to the working folder', () => {
    const env = { HOME: 'home' };
    const chosen = defaultStateDir(env);
    expect(chosen.startsWith('/')).toBe(true);
    expect(chosen).toBe(join(userInfo().homedir, '.local', 'state', 'engage-mcp'));
  });

  // As a uid with no passwd entry (setpriv, as root): no home folder at all.
  it.runIf(hasSetpriv).each(['home', ''])(
    'HOME=%j: a stdio server keeps nothing under its working folder, and refuses a write saying to set ENGAGE_STATE_DIR',
    async (home) => {
      // Run only where setpriv is: the homeless run is the real one, HOME as given.
      const envArgs = homelessArgs(serverEntry('contact'), rig.dir, ['XDG_STATE_HOME', 'XDG_CACHE_HOME']);
      await expectWriteRefusedForNoHome(rig, envArgs, { HOME: home }, { name: 'Relative Home', msisdn: '081277770009' });
    },
  );
});
