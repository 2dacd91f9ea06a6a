// Review 39, setup's command line as a careless person types it. The key given where a name or a
// flag goes (--key-env "$ENGAGE_KEY", the key pasted after the flags) was printed back in the
// refusal, into a terminal or a CI log; --key said only "Unknown option", not where the key comes
// from; a misspelt flag (--hots) named no flag meant; -h was refused. Now the value is not repeated
// (a variable's name is, when spelled as one), --key says to use --key-stdin or --key-env, a
// misspelt flag (or server) names the one meant, a host given without --host is pointed to it, and
// -h is --help.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupWith } from './setup-run.js';

const home = homePerTest('engage-review39-args-');
const KEY = 'eng_live_39c4e1a7b2d9f0c3e6a8b5d2f1e4a7c0';
const ANSWERS = ['--servers', 'contact', '--base-url', 'https://api.example.com', '--yes'];

const run = (args: string[]) => setupWith(home.dir, args, '');

describe('the key where a name or a flag goes', () => {
  it.each([
    ['as the name of --key-env', ['--host', 'cursor', ...ANSWERS, '--key-env', KEY]],
    ['after the flags, without one', ['--host', 'cursor', ...ANSWERS, '--key-stdin', KEY]],
  ])('%s: refused without printing it', async (_, args) => {
    const ran = await run(args);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('not shown: it may be the key');
    expect(ran.stdout + ran.stderr).not.toContain(KEY.slice(9));
  });

  it('names a variable spelled as one, and says it must be exported', async () => {
    const ran = await run(['--host', 'cursor', ...ANSWERS, '--key-env', 'MY_ENGAGE_KEY']);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('--key-env MY_ENGAGE_KEY: that environment variable is not set; it must be exported (export MY_ENGAGE_KEY=…)');
  });

  it('--key says where the key comes from', async () => {
    const ran = await run(['--host', 'cursor', `--key=${KEY}`]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("Unknown option '--key'. The API key is never taken as a flag's value");
    expect(ran.stderr).toContain('--key-stdin');
    expect(ran.stderr).not.toContain(KEY.slice(9));
  });
});

describe('a slip in the flags', () => {
  it.each([
    [['--hots', 'cursor'], "Unknown option '--hots'. Did you mean --host?"],
    [['--Host', 'cursor'], "Unknown option '--Host'. Did you mean --host?"],
    [['--quiet-hour', '21:00-08:00'], 'Did you mean --quiet-hours?'],
    [['cursor', ...ANSWERS], 'every answer is given with its flag: --host cursor, not cursor alone.'],
    [['--host', 'cursor', '--servers', 'contakt,campaing'], 'unknown server contakt, campaing (did you mean contact, campaign?): choose from'],
  ])('%j: names what was meant', async (args, expected) => {
    const ran = await run(args);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(expected);
  });

  it('-h shows the help', async () => {
    const ran = await run(['-h']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('Usage: npx @engage-mcp/setup');
  });
});
