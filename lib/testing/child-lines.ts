/** The stdout lines of a child process, read once, awaited by prefix. */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** The stdout lines of a child, read once, awaited by prefix. */
export class ChildLines {
  private readonly lines: string[] = [];
  private readonly waiting = new Set<() => void>();
  private exited: number | null | undefined;

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      for (const wake of this.waiting) wake();
    });
    child.once('exit', (code) => {
      this.exited = code;
      for (const wake of this.waiting) wake();
    });
  }

  /** The rest of the first unread line that starts with `prefix`. */
  next(prefix: string, timeoutMs = 20_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`no "${prefix}" line from the child within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const finish = (err?: Error, line?: string) => {
        clearTimeout(timer);
        this.waiting.delete(look);
        if (err) reject(err);
        else resolve(line!);
      };
      const look = () => {
        const i = this.lines.findIndex((l) => l.startsWith(prefix));
        if (i >= 0) return finish(undefined, this.lines.splice(i, 1)[0].slice(prefix.length).trim());
        if (this.exited !== undefined)
          finish(new Error(`the child exited (${this.exited}) before printing "${prefix}"`));
      };
      this.waiting.add(look);
      look();
    });
  }
}
