import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The compiled worker `relative` to the module at `base`: next to it when
 * that module runs from dist/, else its twin under dist/ (a spec running the
 * TypeScript sources through Jest still forks the build of `npm run build:all`).
 */
export function compiledWorker(relative: string, base: string): string {
  const path = fileURLToPath(new URL(relative, base));
  return /\/dist\/bench\//.test(path) ? path : path.replace(/\/bench\/(?!.*\/bench\/)/, '/dist/bench/');
}

/** Answers of a bench child process always include this shape on failure. */
export interface FailedAnswer {
  type: 'failed';
  message: string;
}

/**
 * A bench child process (a compiled worker under dist/bench/) driven by
 * request → answer over IPC, one request at a time.
 */
export class ChildWorker<Request extends { type: string }, Answer extends { type: string }> {
  private readonly child: ChildProcess;
  private readonly pending: Array<(m: Answer | FailedAnswer) => void> = [];
  private exited = false;

  /** `execArgv`: node flags of the child (e.g. `--expose-gc` for a heap measurement). */
  constructor(path: string, execArgv: string[] = process.execArgv) {
    this.child = fork(path, [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: Answer) => this.pending.shift()?.(m));
    this.child.on('exit', () => {
      this.exited = true;
      for (const resolve of this.pending.splice(0)) resolve({ type: 'failed', message: 'worker exited' });
    });
  }

  /** Sends `message`; resolves with the answer, or a `failed` answer on timeout or exit. */
  ask(message: Request, timeoutMs: number): Promise<Answer | FailedAnswer> {
    if (this.exited) return Promise.resolve({ type: 'failed', message: 'worker exited' });
    return new Promise((resolve) => {
      const answer = (m: Answer | FailedAnswer): void => {
        clearTimeout(timer);
        resolve(m);
      };
      const timer = setTimeout(() => {
        this.pending.splice(this.pending.indexOf(answer), 1);
        resolve({ type: 'failed', message: `no answer to "${message.type}" within ${timeoutMs} ms` });
      }, timeoutMs);
      this.pending.push(answer);
      this.child.send(message);
    });
  }

  /** Asks the child to exit; kills it if it has not after 5 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'exit' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The answer if it has the `type` expected, else an Error with the child's message. */
export function answer<A extends { type: string }, T extends A['type']>(
  m: A | FailedAnswer,
  type: T,
): Extract<A, { type: T }> {
  if (m.type !== type)
    throw new Error(m.type === 'failed' ? (m as FailedAnswer).message : `unexpected answer "${m.type}"`);
  return m as Extract<A, { type: T }>;
}

/** In a child: routes parent messages to handlers, and reports a handler's failure as `failed`. */
export function serveParent<Request extends { type: string }>(handlers: {
  [K in Request['type']]?: (m: Extract<Request, { type: K }>) => Promise<unknown>;
}): void {
  process.on('message', (m: Request) => {
    if (m.type === 'exit') process.exit(0);
    const handler = handlers[m.type as Request['type']] as ((m: Request) => Promise<unknown>) | undefined;
    handler?.(m).then(
      (reply) => process.send?.(reply),
      (err: unknown) =>
        process.send?.({
          type: 'failed',
          message: err instanceof Error ? err.message : String(err),
        } satisfies FailedAnswer),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
