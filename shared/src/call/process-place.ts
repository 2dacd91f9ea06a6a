// Who a process is, as the writers of the state directory name themselves (a lock's owner, a
// write's sender, a key's reservation): pid and host, and on Linux its start time and its place
// (this boot, its pid namespace and any boot-time offset), so that another process can tell whether
// it is still alive: a pid given again, an earlier boot, another namespace, a zombie. And the steady
// clock the store's entries are dated by, shared by the processes of one boot.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname, uptime } from 'node:os';

/**
 * A steady clock's reading, in milliseconds, and which clock it is. On Linux it is the machine's
 * time since boot (suspended time included, so a laptop asleep for two days has its records
 * expire as the system clock says), shared by every process of that boot (named by its boot id):
 * a server started after the system clock was set forward still knows how old an entry of this
 * boot is. Elsewhere it is this process's own monotonic clock, so only the process that wrote an
 * entry can tell; any other falls back to the system clock.
 */
export type SteadyClock = () => { clock: string; ms: number };

let bootId: string | null | undefined;
const processClock = `process ${process.pid} ${randomBytes(6).toString('hex')}`;

export const systemSteadyClock: SteadyClock = () => {
  bootId ??= readBootId();
  return bootId ? { clock: `boot ${bootId}`, ms: uptime() * 1000 - bootTimeOffset() } : { clock: processClock, ms: performance.now() };
};

let timeOffset: number | undefined;

/**
 * How far this process's time since boot is set off from the machine's (a Linux time namespace: a
 * container restored by CRIU, or started with `unshare --time --boottime`), in ms; taken off, every
 * process of the boot reads one clock. 0 where there is none to read.
 */
function bootTimeOffset(): number {
  if (timeOffset !== undefined) return timeOffset;
  timeOffset = 0;
  try {
    const line = /^boottime\s+(-?\d+)\s+(-?\d+)\s*$/m.exec(fs.readFileSync('/proc/self/timens_offsets', 'utf8'));
    if (line) timeOffset = Number(line[1]) * 1000 + Number(line[2]) / 1e6;
  } catch {
    // No time namespaces (an older kernel): nothing is set off.
  }
  return timeOffset;
}

function readBootId(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const id = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return /^[0-9a-f-]{36}$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

let processName: string | undefined;

/** This process as a lock names its owner (`pid host/start/place nonce`), the same for all its writes. */
export function thisProcess(): string {
  processName ??= `${process.pid} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`;
  return processName;
}

/**
 * Whether the process a write's mark or a key's reservation names is known to be dead (this host's,
 * where its pid means it); unknown is not dead. On Linux a name without its place (a process that
 * could not read its boot id: a systemd unit with ProcSubset=pid, a container masking /proc/sys)
 * may be of another pid namespace with this host's name (a container on the host's network), its
 * pid not this one's to look up: it is left to the lease, as a mark without a sender is.
 */
export function processIsDead(name: string): boolean {
  const owner = ownerOf(name);
  if (!owner) return false;
  if (owner.earlierBoot) return true;
  if (owner.place === undefined && process.platform === 'linux') return false;
  return owner.here && liveness(owner.pid, owner.start) === 'dead';
}

/** A lock's owner as the servers write it (`pid host/start nonce`; earlier, `pid host nonce` or `pid nonce`), undefined for anything else. */
export function ownerOf(
  holder: string,
): { pid: number; host: string | undefined; here: boolean; earlierBoot: boolean; start: string | undefined; place: string | undefined } | undefined {
  const owner = /^(\d+) (?:(\S+?)(?:\/(\d+)(?:\/([0-9a-f]{16}))?)? )?[0-9a-f]{12}$/.exec(holder);
  if (!owner) return undefined;
  // Its pid is one this process can look up only on the same host, and (where the lock says) in the same boot and pid namespace.
  const sameHost = owner[2] === undefined || owner[2] === hostname();
  const place = owner[4];
  const ours = placeOfPids();
  const earlierBoot = sameHost && place !== undefined && ours !== null && place.slice(0, 8) !== ours.slice(0, 8);
  const here = sameHost && (place === undefined || place === ours);
  return { pid: Number(owner[1]), host: owner[2], here, earlierBoot, start: owner[3], place };
}

let ownMark: string | undefined;

/** `/start/place` for this process's lock (see placeOfPids), or `` where the start time cannot be read. */
export function ownStartAndPlace(): string {
  if (ownMark !== undefined) return ownMark;
  const start = startTimeOf('self');
  const place = placeOfPids();
  ownMark = typeof start === 'string' ? `/${start}${place ? `/${place}` : ''}` : '';
  return ownMark;
}

let pidPlace: string | null | undefined;

/**
 * Where this process's pids mean what they mean (on Linux: this boot of this machine, then its pid
 * namespace and any offset of its boot time, 8 hex digits of a digest each): a lock from a container in another pid namespace names
 * a pid that is not this one's to look up, and one from another boot (left by a crash before a
 * reboot) names a process that is gone. Null where it cannot be read, or where /proc is not this
 * pid namespace's (its names then carry no place, and are left to their lease).
 */
function placeOfPids(): string | null {
  if (pidPlace !== undefined) return pidPlace;
  pidPlace = null;
  bootId ??= readBootId();
  if (bootId)
    try {
      // A /proc that shows this process under another pid is not its pid namespace's (a namespace
      // made without a /proc of its own: unshare --pid without --mount-proc, bwrap --unshare-pid over
      // the host's /proc): /proc/<pid> there is another process, so no pid is looked up by it.
      if (fs.readlinkSync('/proc/self') !== String(process.pid)) return pidPlace;
      const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);
      // Start times in /proc are as the reader's time namespace sees them: a process whose boot time
      // is set off (bootTimeOffset) reads every start time off by as much, so that offset is part of its place.
      const offset = bootTimeOffset();
      const pids = fs.readlinkSync('/proc/self/ns/pid');
      pidPlace = `${digest(bootId)}${digest(offset === 0 ? pids : `${pids} boottime ${offset}`)}`;
    } catch {
      // No pid namespace to read: the lock names no place, and is looked up by host name, as before.
    }
  return pidPlace;
}

/**
 * Whether a lock's owner on this host is alive: 'dead' if its pid is not, or (where the lock names
 * its start time, and this host can read it) the process with that pid started at another time (it
 * was given the pid after the owner died); 'owner' if the process is the owner itself, its start
 * time the same; 'unknown' if the pid is alive but nothing says whose it is (an earlier lock, or
 * no /proc): it may have been given to another process, so the lock's age still counts. A zombie
 * (killed, its parent not yet waiting for it: a container's init that reaps no orphans) answers
 * signal 0 as a live process does, and is dead.
 */
export function liveness(pid: number, start: string | undefined): 'dead' | 'owner' | 'unknown' {
  if (!Number.isSafeInteger(pid) || pid <= 0) return 'dead';
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'dead';
  }
  const stat = statOf(pid);
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return 'dead';
  if (start === undefined) return 'unknown';
  const now = stat === null ? null : stat?.start;
  if (now === undefined) return 'unknown';
  return now === start ? 'owner' : 'dead';
}

/**
 * A process's start time (clock ticks after boot: field 22 of /proc/<pid>/stat), which a pid
 * given again to a new process does not share; null if there is no such process, undefined where
 * it cannot be read (not Linux, no /proc).
 */
function startTimeOf(pid: number | 'self'): string | null | undefined {
  const stat = statOf(pid);
  return stat === null ? null : stat?.start;
}

/**
 * A process's state (field 3 of /proc/<pid>/stat: R, S, Z for a zombie, …) and start time (see
 * startTimeOf, undefined where it cannot be read); null if there is no such process, undefined
 * where /proc/<pid>/stat cannot be read (not Linux, no /proc).
 */
function statOf(pid: number | 'self'): { state: string | undefined; start: string | undefined } | null | undefined {
  if (process.platform !== 'linux') return undefined;
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' && pid !== 'self' && fs.existsSync('/proc/self/stat') ? null : undefined;
  }
  // The command's name (field 2) is in parentheses and may hold spaces and parentheses itself: the fields after it are counted from the last.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return { state: fields[0], start: start !== undefined && /^\d+$/.test(start) ? start : undefined };
}
