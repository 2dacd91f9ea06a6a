// A real redis-server for tests and the soak: on a free loopback port, nothing saved to disk, and
// only this child is ever stopped. With `tls`, it listens only on a TLS port (a certificate made by
// makeCertificates, signed by a CA of the test's own); `users` adds ACL users.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';

export const REDIS_SERVER = process.env.ENGAGE_TEST_REDIS_SERVER ?? '/usr/bin/redis-server';

export interface TlsFiles {
  /** The test CA's certificate (PEM path): what a client must trust. */
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface RedisServerOptions {
  tls?: TlsFiles;
  /** ACL rules, one user each, as in `alice on >password ~* &* +@all`. */
  users?: string[];
}

/** A CA and a certificate it signs for 127.0.0.1 and localhost, made with the openssl CLI in `dir`. */
export function makeCertificates(dir: string, name = 'engage-test'): TlsFiles {
  const file = (suffix: string) => join(dir, `${name}-${suffix}`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', `/CN=${name} test CA`);
  openssl('req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  const signedByCa = ['-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial'];
  openssl('x509', '-req', '-in', file('server.csr'), ...signedByCa, '-out', file('server.crt'), '-days', '2', '-extfile', file('san.ext'));
  return { caFile: file('ca.crt'), certFile: file('server.crt'), keyFile: file('server.key') };
}

export interface RedisServer {
  url: string;
  port: number;
  /** The running child's pid (undefined while stopped). */
  readonly pid: number | undefined;
  stop(): Promise<void>;
  /** Starts it again on the same port (after stop, or stopping it first); its data is gone. */
  restart(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** True once the server answers PING with +PONG (over TLS, trusting `ca`, when given). */
function ping(port: number, ca?: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const socket: Socket = ca ? connectTls({ host: '127.0.0.1', port, ca }) : connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once(ca ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Spawns redis-server on `port`; resolves when it answers PING, rejects if it exits first (a port clash). */
async function spawnOn(port: number, options: RedisServerOptions): Promise<ChildProcess> {
  const { tls, users = [] } = options;
  // TLS only: the plain port is off (0), and clients need no certificate of their own.
  const certificates = tls ? ['--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile, '--tls-ca-cert-file', tls.caFile] : [];
  const listen = tls ? ['--port', '0', '--tls-port', String(port), ...certificates, '--tls-auth-clients', 'no'] : ['--port', String(port)];
  const acl = users.flatMap((rule) => ['--user', ...rule.split(' ')]);
  const args = [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', ...acl];
  const child = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const ca = tls ? readFileSync(tls.caFile) : undefined;
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (let attempt = 0; attempt < 200; attempt++) {
    if (exited) throw new Error(`redis-server exited at start on port ${port}: ${output.trim().split('\n').slice(-3).join(' | ')}`);
    if (await ping(port, ca)) return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not answer PING on port ${port} within 5 s`);
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  if (!existsSync(REDIS_SERVER)) {
    const how = 'Run `node scripts/ensure-redis.mjs` (Debian, as root), or install it and set ENGAGE_TEST_REDIS_SERVER.';
    throw new Error(`${REDIS_SERVER} is missing: these tests need a real Redis. ${how}`);
  }
  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      child = await spawnOn(port, options);
      break;
    } catch (error) {
      // Another process took the port between our probe and the spawn: try another.
      if (attempt >= 4) throw error;
    }
  }
  const stopOnExit = () => child?.kill('SIGKILL');
  process.once('exit', stopOnExit);
  return {
    url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    port,
    get pid() {
      return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    async stop() {
      await stopChild(child);
      child = undefined;
      process.removeListener('exit', stopOnExit);
    },
    async restart() {
      await stopChild(child);
      // The port was ours a moment ago; a clash here is retried briefly, then reported.
      for (let attempt = 0; ; attempt++) {
        try {
          child = await spawnOn(port, options);
          break;
        } catch (error) {
          if (attempt >= 10) throw error;
          await sleep(100);
        }
      }
      process.removeListener('exit', stopOnExit);
      process.once('exit', stopOnExit);
    },
  };
}
