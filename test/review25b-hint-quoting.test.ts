// Review 25b: the commands a refusal tells the user to run (mv a damaged state file aside, chmod a
// state directory others may write) named the path unquoted: with a state directory whose path
// holds a space, a quote, a $ or a backtick, the command the user copies moved or changed the wrong
// thing (or ran what the backtick held). Each path is now one word for a POSIX shell, and on
// Windows the command is PowerShell's.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moveAsideCommand, removeCommand } from '../shared/src/call/own-files.js';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { structuredOf, textOf } from './helpers.js';

const { sandbox, stateDir, params, sends } = stateDirFixture('review25b-quoting', '62812555');

/** A folder name a shell reads as more than one word, a variable, a command and a quote. */
const AWKWARD = "my state $HOME `touch pwned` it's";

describe('the command in a refusal, copied into a POSIX shell, does what it says', () => {
  it('a damaged state.json: the mv the answer names moves exactly that file aside, and the next write goes', async () => {
    const dir = join(stateDir(), AWKWARD);
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'state.json'), '{"counters":', { mode: 0o600 });
    const server = await launchChannel(sandbox(), dir);
    try {
      const before = sends();
      const refused = await callSend(server, { params: params(1) });
      expect(refused.isError).toBe(true);
      const command = /Move it aside \((mv .*)\): the counters/.exec(textOf(refused))?.[1];
      expect(command, textOf(refused)).toBeDefined();
      execFileSync('/bin/sh', ['-c', command!], { cwd: stateDir() });
      expect(existsSync(join(dir, 'state.json.damaged'))).toBe(true);
      expect(existsSync(join(dir, 'state.json'))).toBe(false);
      expect(existsSync(join(stateDir(), 'pwned'))).toBe(false);
      expect(sends()).toBe(before);
      expect(structuredOf(await callSend(server, { params: params(1) })).outcome).toBe('done');
    } finally {
      await server.close();
    }
  });

  it('a state directory others may write: the chmod the answer names tightens exactly that directory', async () => {
    const dir = join(stateDir(), AWKWARD);
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o777);
    const server = await launchChannel(sandbox(), dir);
    try {
      const refused = await callSend(server, { params: params(2) });
      const command = /Run: (chmod 700 .*)\. Nothing was sent/.exec(textOf(refused))?.[1];
      expect(command, textOf(refused)).toBeDefined();
      execFileSync('/bin/sh', ['-c', command!], { cwd: stateDir() });
      expect(structuredOf(await callSend(server, { params: params(2) })).outcome).toBe('done');
    } finally {
      await server.close();
    }
  });

  it('each command takes the path as one word whatever it holds; Windows users get PowerShell', () => {
    const root = stateDir();
    for (const name of ['plain', 'two words', "it's", 'a$HOME', 'a`id`b', 'new\nline', '-dash', "'; rm -rf x; '"]) {
      const path = join(root, name);
      writeFileSync(path, 'x');
      execFileSync('/bin/sh', ['-c', moveAsideCommand(path)], { cwd: root });
      expect(existsSync(`${path}.damaged`), name).toBe(true);
      execFileSync('/bin/sh', ['-c', removeCommand(`${path}.damaged`)], { cwd: root });
      expect(existsSync(`${path}.damaged`), name).toBe(false);
    }
    // The usual path stays as it is.
    expect(moveAsideCommand('/home/ana/.local/state/engage-mcp/state.json', 'linux')).toBe(
      'mv /home/ana/.local/state/engage-mcp/state.json /home/ana/.local/state/engage-mcp/state.json.damaged',
    );
    expect(moveAsideCommand("C:\\Users\\Ana O'Neil\\engage\\state.json", 'win32')).toBe(
      "Move-Item -LiteralPath 'C:\\Users\\Ana O''Neil\\engage\\state.json' 'C:\\Users\\Ana O''Neil\\engage\\state.json.damaged'",
    );
    expect(removeCommand('C:\\x y\\state.lock', 'win32')).toBe("Remove-Item -LiteralPath 'C:\\x y\\state.lock'");
  });
});
