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
  /** Fields of the moment (a request's id), read as each line is written. */
  context?: () => Record<string, unknown> | undefined;
}

export interface JsonLog extends Logger {
  /** A line with fields of its own beside time, level and msg. */
  emit(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

/** `scheme://user:password@host` → `scheme://user:[redacted]@host`, wherever it appears in a message. */
export function redactUrlPasswords(text: string): string {
  return text.replace(/\b([a-z][\w+.-]*:\/\/[^\s/@:]*):[^\s/@]*@/gi, '$1:[redacted]@');
}

export function createJsonLog(options: JsonLogOptions = {}): JsonLog {
  const writeLine = options.writeLine ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const threshold = LEVELS[options.level ?? 'info'];
  const safe = logSafe([]);
  const emit = (level: LogLevel, message: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[level] > threshold) return;
    const line = { time: new Date().toISOString(), level, msg: safe(redactUrlPasswords(message)), ...options.context?.(), ...fields };
    writeLine(JSON.stringify(line));
  };
  return {
    emit,
    error: (message) => emit('error', message),
    warn: (message) => emit('warn', message),
    info: (message) => emit('info', message),
    debug: (message) => emit('debug', message),
  };
}
