// Logging goes to stderr only: stdout is the MCP protocol. Every line passes through redaction,
// so the key cannot reach a log whatever an error message happened to contain.
import type { LogLevel } from './config.js';

const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
}

export function createLogger(name: string, level: LogLevel, secrets: readonly string[], write = (line: string) => process.stderr.write(line)): Logger {
  const redact = redactor(secrets);
  const log = (at: LogLevel) => (message: string) => {
    if (ORDER[at] <= ORDER[level]) write(`[${name}] ${at}: ${redact(message)}\n`);
  };
  return { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };
}

/** Replaces every secret (and any Bearer or x-api-key value) with [redacted]. */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const usable = secrets.filter((secret) => secret.length >= 4);
  return (text) => {
    let out = text;
    for (const secret of usable) out = out.split(secret).join('[redacted]');
    return out.replace(/(bearer\s+|x-api-key["':=\s]+)[^\s"',]+/gi, '$1[redacted]');
  };
}
