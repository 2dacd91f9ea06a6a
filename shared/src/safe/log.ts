// Logging goes to stderr only: stdout is the MCP protocol. Every line is made safe before it is
// written: invisible characters removed, then the key redacted in every form, then newlines and
// tabs escaped (so text from the API cannot forge log lines or drive the terminal), and only
// then cut, so a cut can never leave a window of the key behind.
import { logRedactor } from './redact.js';
import { cleanText } from './sanitize.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
/** The longest message a log line carries. */
export const MAX_LOG_MESSAGE = 2_000;
// Cleaning and redaction are linear, but a 64 MiB body need not pass through them. Where this
// first cut falls inside the key, redaction is told, and removes the key's start left before it.
export const PRE_CUT = MAX_LOG_MESSAGE * 16;

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
}

export function createLogger(name: string, level: LogLevel, secrets: readonly string[], write = (line: string) => process.stderr.write(line)): Logger {
  const safe = logSafe(secrets);
  const log = (at: LogLevel) => (message: string) => {
    if (ORDER[at] <= ORDER[level]) write(`[${name}] ${at}: ${safe(message)}\n`);
  };
  return { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };
}

/** One safe log line's message: cleaned, redacted, escaped, then cut. */
export function logSafe(secrets: readonly string[]): (message: string) => string {
  const redact = logRedactor(secrets);
  return (message) => {
    const cut = message.length > PRE_CUT;
    const redacted = redact(cleanText(cut ? message.slice(0, PRE_CUT) : message), { cutAtEnd: cut });
    const escaped = redacted.replace(/\n/g, '\\n').replace(/\t/g, '\\t');
    return escaped.length > MAX_LOG_MESSAGE || cut ? `${escaped.slice(0, MAX_LOG_MESSAGE)}…[cut]` : escaped;
  };
}

/** Replaces the key in every form (and any Bearer or x-api-key value) with [redacted]. */
export const redactor = logRedactor;
