// One way remote mode logs, for the service and its command line alike: JSON lines on stderr
// (stdout carries only the CLI's {"url": …} line). A key never reaches a log: messages pass through
// the core's redaction (Bearer and x-api-key values), and a password in a URL is cut out too.
import { logSafe, type Logger } from '@engage-mcp/shared';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const LEVELS: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface JsonLogOptions {
  level?: LogLevel;
  /** One JSON line, without its newline; stderr by default. */
  writeLine?: (line: string) => void;
}

export interface JsonLog extends Logger {
  /** A line with fields of its own beside time, level and msg. */
  emit(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  /** The same log with these fields on every line (a request's id): handed down explicitly, not found by async context. */
  withFields(fields: Record<string, unknown>): JsonLog;
}

/**
 * The password of a URL's user: the `:…@` right after `://` and a user name. Tried at each `:`
 * only, whose lookbehind reads back to the `://` and stops at the first `:`, `/`, `@` or blank, so
 * each character is read a few times at most. `\b[a-z][\w+.-]*://` restarted at every word of a
 * message, and a client's 2 MB error message of `a.a.a.…` held the service's one event loop for minutes.
 */
const URL_PASSWORD = /:(?<=:\/\/[^\s/@:]*:)[^\s/@]*@/g;

/** `scheme://user:password@host` → `scheme://user:[redacted]@host`, wherever it appears in a message. */
function redactUrlPasswords(text: string): string {
  return text.includes('://') ? text.replace(URL_PASSWORD, ':[redacted]@') : text;
}

export function createJsonLog(options: JsonLogOptions = {}): JsonLog {
  const writeLine = options.writeLine ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const threshold = LEVELS[options.level ?? 'info'];
  const safe = logSafe([]);
  const withFields = (base: Record<string, unknown>): JsonLog => {
    const emit = (level: LogLevel, message: string, fields: Record<string, unknown> = {}) => {
      if (LEVELS[level] > threshold) return;
      writeLine(JSON.stringify({ time: new Date().toISOString(), level, msg: safe(redactUrlPasswords(message)), ...base, ...fields }));
    };
    return {
      emit,
      withFields: (fields) => withFields({ ...base, ...fields }),
      error: (message) => emit('error', message),
      warn: (message) => emit('warn', message),
      info: (message) => emit('info', message),
      debug: (message) => emit('debug', message),
    };
  };
  return withFields({});
}

/** The log of the request an authInfo came with: its lines carry the request's id, which the handler put in authInfo.extra. */
export function requestLogOf(log: JsonLog, auth: { extra?: Record<string, unknown> } | undefined): JsonLog {
  const requestId = auth?.extra?.requestId;
  return typeof requestId === 'string' ? log.withFields({ requestId }) : log;
}
