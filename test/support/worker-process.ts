/** A store test's worker: a compiled fixture in a child process, its output and exit, and its IPC `ready`. */
import { spawn, type ChildProcess } from 'node:child_process';

/** A running worker: its process, what it printed, and a promise of its exit code. */
export interface Worker {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line that starts with `prefix`. */
  line(prefix: string, timeoutMs?: number): Promise<string>;
  /** Resolves when the worker sends its IPC `ready` message. */
  ready(timeoutMs?: number): Promise<void>;
}

/** Starts the compiled script `script` with `mode` as its argument and `env` added to this process's environment. */
export function startWorkerProcess(script: string, mode: string, env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [script, mode], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const within = <T>(what: string, ms: number, p: Promise<T>): Promise<T> =>
    Promise.race([
      p,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`worker ${mode}: no ${what} after ${ms} ms; stderr: ${err}`)), ms).unref(),
      ),
    ]);
  return {
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    line: (prefix, timeoutMs = 15_000) =>
      within(
        `line "${prefix}"`,
        timeoutMs,
        new Promise<string>((resolve) => {
          const check = (): void => {
            const found = out.split('\n').find((l) => l.startsWith(prefix));
            if (found) {
              child.stdout!.off('data', check);
              resolve(found);
            }
          };
          child.stdout!.on('data', check);
          check();
        }),
      ),
    ready: (timeoutMs = 15_000) =>
      within('ready message', timeoutMs, new Promise<void>((resolve) => child.once('message', () => resolve()))),
  };
}
