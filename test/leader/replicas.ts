/**
 * Test helper: replicas of a Nest app with a `@Leader` method, each its own
 * process (fixtures/leader-worker.ts, compiled by `npm test`), and the
 * interval checker over what they printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { compiledScript } from '../support/paths.js';
import { sleep } from '../support/sleep.js';

export interface WorkerSettings {
  store: 'redis' | 'postgres';
  url: string;
  table?: string;
  name: string;
  ttl: number;
  retryDelay: number;
  commandTimeout: number;
}

/** One line a replica printed. */
export interface Event {
  readonly replica: string;
  readonly kind: 'elected' | 'tick' | 'lost';
  readonly token: number;
  /** Wall-clock ms (all processes run on this machine). */
  readonly at: number;
  /** `lost` only: the local lease end (wall-clock ms) at the moment the signal aborted. */
  readonly leaseEnd?: number;
  readonly reason?: string;
}

/** One replica process. */
export class Replica {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  private readyResolve!: () => void;
  readonly ready: Promise<void>;
  stderr = '';

  constructor(
    readonly id: string,
    settings: WorkerSettings,
    private readonly sink: (e: Event) => void,
  ) {
    this.ready = new Promise((r) => (this.readyResolve = r));
    this.child = spawn(
      process.execPath,
      [
        compiledScript(new URL('./fixtures/leader-worker.js', import.meta.url)),
        JSON.stringify({ ...settings, instanceId: id }),
      ],
      {
        env: { ...process.env, NODE_OPTIONS: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      if (line === 'ready') return this.readyResolve();
      const [kind, token, at, leaseEnd, ...reason] = line.split(' ');
      if (kind !== 'elected' && kind !== 'tick' && kind !== 'lost') return;
      this.sink({
        replica: id,
        kind,
        token: Number(token),
        at: Number(at),
        leaseEnd: kind === 'lost' ? Number(leaseEnd) : undefined,
        reason: kind === 'lost' ? reason.join(' ') : undefined,
      });
    });
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  signal(sig: NodeJS.Signals): void {
    if (this.alive) this.child.kill(sig);
  }
}

/** A few replicas of the same app, and what they printed. */
export class Replicas {
  readonly events: Event[] = [];
  readonly replicas: Replica[] = [];

  constructor(private readonly settings: WorkerSettings) {}

  /** Starts `n` replicas and waits until each is ready (bootstrapped). */
  async start(n: number, prefix = 'replica'): Promise<void> {
    const started = Array.from(
      { length: n },
      (_, i) => new Replica(`${prefix}-${this.replicas.length + i + 1}`, this.settings, (e) => this.events.push(e)),
    );
    this.replicas.push(...started);
    await Promise.all(
      started.map((r) =>
        Promise.race([
          r.ready,
          r.exited.then(() => {
            throw new Error(`${r.id} exited before it was ready: ${r.stderr}`);
          }),
          sleep(20_000).then(() => {
            throw new Error(`${r.id} was not ready within 20 s: ${r.stderr}`);
          }),
        ]),
      ),
    );
  }

  get(id: string): Replica {
    return this.replicas.find((r) => r.id === id)!;
  }

  /** The first `elected` event that matches, after `after` (wall-clock ms); waits up to `timeoutMs`. */
  async elected(after: number, timeoutMs: number, not?: string): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = this.events.find((x) => x.kind === 'elected' && x.at >= after && x.replica !== not);
      if (e) return e;
      if (Date.now() > deadline) {
        throw new Error(
          `no replica${not ? ` other than ${not}` : ''} was elected within ${timeoutMs} ms; events: ${this.summary()}`,
        );
      }
      await sleep(10);
    }
  }

  /** The first event that matches `pred`; waits up to `timeoutMs`. */
  async first(what: string, pred: (e: Event) => boolean, timeoutMs: number): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = this.events.find(pred);
      if (e) return e;
      if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms; events: ${this.summary()}`);
      await sleep(10);
    }
  }

  /** Ticks of `replica` (any term) after `after`. */
  ticks(replica: string, after: number): Event[] {
    return this.events.filter((e) => e.kind === 'tick' && e.replica === replica && e.at > after);
  }

  /**
   * The interval checker: the ticks of each term (replica, fencing token)
   * span an interval; no two terms' intervals overlap, and tokens rise from
   * one term to the next.
   */
  terms(): Array<{ replica: string; token: number; first: number; last: number; ticks: number }> {
    const byTerm = new Map<string, { replica: string; token: number; first: number; last: number; ticks: number }>();
    for (const e of this.events) {
      if (e.kind !== 'tick') continue;
      const key = `${e.replica}#${e.token}`;
      const t = byTerm.get(key);
      if (!t) byTerm.set(key, { replica: e.replica, token: e.token, first: e.at, last: e.at, ticks: 1 });
      else {
        t.first = Math.min(t.first, e.at);
        t.last = Math.max(t.last, e.at);
        t.ticks++;
      }
    }
    return [...byTerm.values()].sort((a, b) => a.first - b.first);
  }

  /** Throws, with the terms, when two terms overlap or a later term's token is not higher. */
  expectNoOverlap(): void {
    const terms = this.terms();
    for (let i = 1; i < terms.length; i++) {
      const [a, b] = [terms[i - 1], terms[i]];
      if (!(a.last < b.first) || !(a.token < b.token)) {
        throw new Error(
          `terms overlap or tokens do not rise: ${JSON.stringify(a)} then ${JSON.stringify(b)}\nall terms: ${JSON.stringify(terms, null, 1)}`,
        );
      }
    }
  }

  /** Throws, with what the replicas printed, unless `ms` < `bound`. */
  expectWithin(what: string, ms: number, bound: number): void {
    if (!(ms < bound)) throw new Error(`${what} took ${ms} ms, not under ${bound} ms; events: ${this.summary()}`);
  }

  summary(): string {
    const logs = this.replicas.filter((r) => r.stderr).map((r) => `\n${r.id} stderr: ${r.stderr.slice(-1_500)}`);
    return (
      JSON.stringify(this.terms()) + ' ' + JSON.stringify(this.events.filter((e) => e.kind !== 'tick')) + logs.join('')
    );
  }

  /** Kills every replica still running (SIGCONT first, for a stopped one) and waits for them to exit. */
  async stop(): Promise<void> {
    for (const r of this.replicas) {
      r.signal('SIGCONT');
      r.signal('SIGKILL');
    }
    await Promise.all(this.replicas.map((r) => r.exited));
  }
}
