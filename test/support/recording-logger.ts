import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps every line (level, message), for tests that count log lines. */
export class RecordingLogger implements LoggerService {
  entries: Array<[level: string, message: string]> = [];
  log(m: unknown) {
    this.entries.push(['log', String(m)]);
  }
  warn(m: unknown) {
    this.entries.push(['warn', String(m)]);
  }
  error(m: unknown) {
    this.entries.push(['error', String(m)]);
  }
  debug(m: unknown) {
    this.entries.push(['debug', String(m)]);
  }
  verbose(m: unknown) {
    this.entries.push(['verbose', String(m)]);
  }
  fatal(m: unknown) {
    this.entries.push(['fatal', String(m)]);
  }

  /** Lines at `level` whose text contains `part` (all lines at `level` without it). */
  lines(level: string, part = ''): string[] {
    return this.entries.filter(([l, m]) => l === level && m.includes(part)).map(([, m]) => m);
  }
}
