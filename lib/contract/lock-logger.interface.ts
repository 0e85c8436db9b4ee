/**
 * Where the engine writes its logs. The Nest layer passes Nest's `Logger`
 * (context: the class name); standalone users may pass `console`.
 */
export interface LockLogger {
  debug(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A logger that drops everything. @internal */
export const silentLogger: LockLogger = { debug() {}, warn() {}, error() {} };
