/**
 * Model-based property test of the lock contract, with fast-check: random
 * schedules of try, acquire with and without timeout, abort, release, extend
 * and lease expiry, by several managers (each on a provider of its own where
 * the store is shared), each answer compared with a small reference model:
 * at most one owner; waiters granted in arrival order; fencing tokens
 * strictly increasing; release and extend act only for the owner.
 *
 * Runs are seeded (`FC_SEED`, default 1; `random` for a new one) and shrink,
 * so a failure prints the seed and a short schedule to replay; `FC_RUNS`
 * sets how many (see `npm run test:model`).
 */
import fc from 'fast-check';
import { LockAcquireError, LockLostError, LockManager, type LockHandle, type LockProvider } from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

/** How long the schedules' timed steps take, per store (a store with a network round trip needs more room). */
export interface ModelTiming {
  /** The lease of a lock taken to lapse, in ms. */
  readonly shortLease: number;
  /** A short lease younger than this has surely not lapsed: other steps run only then. */
  readonly fresh: number;
  /** `waitTimeout` of a timed wait behind a holder. */
  readonly waitTimeout: number;
}

export interface ModelTarget {
  readonly label: string;
  /** One provider per instance (the same one again for an in-process store). */
  readonly providers: readonly LockProvider[];
  readonly timing: ModelTiming;
  /** Runs in `npm test` (`FC_RUNS` overrides). */
  readonly runs: number;
}

const LONG = 60_000;
/** Bound on a grant the model says must come now (a hand-off on release, or after a lapse). */
const SETTLE_MS = 5_000;
const now = (): number => performance.now();

interface Waiter {
  readonly id: number;
  readonly manager: number;
  state: 'pending' | 'granted' | 'failed';
  handle?: LockHandle;
  error?: unknown;
  readonly settled: Promise<void>;
  readonly abort: AbortController;
}

/** The system under test: managers over the providers, one lock name per run. */
class Real {
  readonly managers: LockManager[];
  readonly name = `model:${Math.random().toString(36).slice(2)}`;
  readonly handles = new Map<number, LockHandle>();
  readonly waiters = new Map<number, Waiter>();
  private nextId = 1;
  constructor(
    target: ModelTarget,
    readonly timing: ModelTiming,
  ) {
    // Strict arrival order across managers: every waiter queues at the store.
    this.managers = target.providers.map((provider) => new LockManager({ provider, localHandOff: false }));
  }

  id(): number {
    return this.nextId++;
  }

  wait(manager: number, options: { waitTimeout?: number } = {}): Waiter {
    const abort = new AbortController();
    const id = this.id();
    const waiter: Waiter = {
      id,
      manager,
      state: 'pending',
      abort,
      settled: this.managers[manager]
        .acquire(this.name, { ttl: LONG, renew: false, signal: abort.signal, ...options })
        .then(
          (handle) => {
            waiter.state = 'granted';
            waiter.handle = handle;
            this.handles.set(id, handle);
          },
          (error: unknown) => {
            waiter.state = 'failed';
            waiter.error = error;
          },
        ),
    };
    this.waiters.set(id, waiter);
    return waiter;
  }

  async cleanUp(): Promise<void> {
    for (const w of this.waiters.values()) w.abort.abort(new Error('end of run'));
    await Promise.all([...this.waiters.values()].map((w) => w.settled));
    await Promise.all([...this.handles.values()].map((h) => h.release()));
    await Promise.all(this.managers.map((m) => m.close()));
  }
}

/** The reference model. */
class Model {
  owner: number | null = null;
  /** When the owner's short lease started (performance.now()); `undefined` for a long lease. */
  shortSince: number | undefined;
  /** Waiters in arrival order. */
  readonly queue: number[] = [];
  /** Every id ever granted, for release and extend steps (the owner's, and stale ones). */
  readonly granted: number[] = [];
  lastToken = 0;
  constructor(readonly timing: ModelTiming) {}

  /** A short lease that may have lapsed already: only the lapse step may run. */
  get unsure(): boolean {
    return this.shortSince !== undefined && now() - this.shortSince > this.timing.fresh;
  }

  get free(): boolean {
    return this.owner === null && this.queue.length === 0;
  }
}

type Cmd = fc.AsyncCommand<Model, Real, false>;

function fail(message: string): never {
  throw new Error(message);
}

/** Records a grant: tokens strictly increase, and the grantee becomes the one owner. */
function grant(model: Model, id: number, handle: LockHandle, short = false): void {
  if (!(handle.fencingToken > model.lastToken))
    fail(`fencing token ${handle.fencingToken} is not above the previous ${model.lastToken}`);
  if (!handle.held) fail(`lock ${id} was granted but is not held`);
  model.lastToken = handle.fencingToken;
  model.owner = id;
  model.shortSince = short ? now() : undefined;
  model.granted.push(id);
}

async function settled(w: Waiter, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([w.settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_MS)))]);
  clearTimeout(timer);
  if (w.state === 'pending') fail(`${what}: waiter ${w.id} is still waiting after ${SETTLE_MS} ms`);
}

/** The owner left (release, lapse): the head of the queue must be granted now, and nobody else. */
async function handOn(model: Model, real: Real): Promise<void> {
  model.owner = null;
  model.shortSince = undefined;
  const head = model.queue.shift();
  if (head === undefined) return;
  const w = real.waiters.get(head)!;
  await settled(w, 'the next in line');
  if (w.state !== 'granted') fail(`waiter ${head}, next in line, failed: ${String(w.error)}`);
  grant(model, head, w.handle!);
  await sleep(5);
  for (const other of model.queue) {
    if (real.waiters.get(other)!.state !== 'pending')
      fail(`waiter ${other} settled out of turn (the head was ${head})`);
  }
}

class TryCmd implements Cmd {
  constructor(
    readonly manager: number,
    readonly short: boolean,
  ) {}
  check(m: Readonly<Model>): boolean {
    return !m.unsure && (!this.short || m.free);
  }
  async run(model: Model, real: Real): Promise<void> {
    const ttl = this.short ? real.timing.shortLease : LONG;
    const handle = await real.managers[this.manager].tryAcquire(real.name, { ttl, renew: false });
    if (!model.free) {
      if (handle)
        fail(
          `try by manager ${this.manager} was granted while ${model.owner === null ? 'waiters were queued' : `${model.owner} held the lock`}`,
        );
      return;
    }
    if (!handle) fail(`try by manager ${this.manager} found the lock held; nobody holds it or waits`);
    const id = real.id();
    real.handles.set(id, handle);
    grant(model, id, handle, this.short);
  }
  toString(): string {
    return `try(m${this.manager}${this.short ? ', short lease' : ''})`;
  }
}

class WaitCmd implements Cmd {
  constructor(readonly manager: number) {}
  check(m: Readonly<Model>): boolean {
    return !m.unsure;
  }
  async run(model: Model, real: Real): Promise<void> {
    const w = real.wait(this.manager);
    if (model.free) {
      await settled(w, 'a wait for a free lock');
      if (w.state !== 'granted') fail(`a wait for a free lock failed: ${String(w.error)}`);
      grant(model, w.id, w.handle!);
      return;
    }
    await sleep(10);
    if (w.state !== 'pending') fail(`waiter ${w.id} settled at once (${w.state}) although the lock is taken`);
    model.queue.push(w.id);
  }
  toString(): string {
    return `wait(m${this.manager})`;
  }
}

/** A wait behind the owner that ends by its timeout, or by an abort, within the step. */
class BoundedWaitCmd implements Cmd {
  constructor(
    readonly manager: number,
    readonly abort: boolean,
  ) {}
  check(m: Readonly<Model>): boolean {
    return !m.unsure && m.owner !== null;
  }
  async run(model: Model, real: Real): Promise<void> {
    const reason = new Error('model abort');
    const w = real.wait(this.manager, this.abort ? {} : { waitTimeout: real.timing.waitTimeout });
    if (this.abort) {
      await sleep(20);
      w.abort.abort(reason);
    }
    await settled(w, 'a bounded wait');
    if (this.abort ? w.error !== reason : !(w.error instanceof LockAcquireError)) {
      fail(
        `a ${this.abort ? 'aborted' : 'timed-out'} wait ended with ${w.state === 'granted' ? 'a grant' : String(w.error)}`,
      );
    }
  }
  toString(): string {
    return `${this.abort ? 'abortedWait' : 'timedWait'}(m${this.manager})`;
  }
}

class AbortQueuedCmd implements Cmd {
  constructor(readonly pick: number) {}
  check(m: Readonly<Model>): boolean {
    return !m.unsure && m.queue.length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const id = model.queue[this.pick % model.queue.length];
    const w = real.waiters.get(id)!;
    const reason = new Error('model abort');
    w.abort.abort(reason);
    await settled(w, 'an aborted waiter');
    if (w.error !== reason)
      fail(`aborted waiter ${id} ended with ${w.state === 'granted' ? 'a grant' : String(w.error)}`);
    model.queue.splice(model.queue.indexOf(id), 1);
  }
  toString(): string {
    return `abortQueued(#${this.pick})`;
  }
}

/** A step on one of the locks granted so far (the owner's, or a stale one). */
abstract class OnGrantedCmd implements Cmd {
  constructor(readonly pick: number) {}
  check(m: Readonly<Model>): boolean {
    return !m.unsure && m.granted.length > 0;
  }
  async run(model: Model, real: Real): Promise<void> {
    const id = model.granted[this.pick % model.granted.length];
    await this.on(model, real, id, real.handles.get(id)!);
  }
  abstract on(model: Model, real: Real, id: number, handle: LockHandle): Promise<void>;
}

class ReleaseCmd extends OnGrantedCmd {
  async on(model: Model, real: Real, id: number, handle: LockHandle): Promise<void> {
    const released = await handle.release();
    if (released !== (id === model.owner)) fail(`release of ${id} answered ${released}; the owner is ${model.owner}`);
    if (released) await handOn(model, real);
  }
  toString(): string {
    return `release(#${this.pick})`;
  }
}

class ExtendCmd extends OnGrantedCmd {
  async on(model: Model, _real: Real, id: number, handle: LockHandle): Promise<void> {
    const extended = await handle.extend(LONG).then(
      () => true,
      (err: unknown) => {
        if (!(err instanceof LockLostError)) throw err;
        return false;
      },
    );
    if (extended !== (id === model.owner))
      fail(`extend of ${id} ${extended ? 'succeeded' : 'failed'}; the owner is ${model.owner}`);
    if (extended) model.shortSince = undefined; // a long lease now
  }
  toString(): string {
    return `extend(#${this.pick})`;
  }
}

/** Lets the owner's short lease (renewal off) run out: the handle is lost, and the next in line gets the lock. */
class LapseCmd implements Cmd {
  check(m: Readonly<Model>): boolean {
    return m.shortSince !== undefined;
  }
  async run(model: Model, real: Real): Promise<void> {
    const owner = model.owner!;
    await sleep(model.shortSince! + real.timing.shortLease + 300 - now());
    if (real.handles.get(owner)!.held) fail(`lock ${owner} is still held after its lease ran out`);
    await handOn(model, real);
  }
  toString(): string {
    return 'lapse';
  }
}

/** Registers the property test for `target` (call inside a describe or at top level of a spec). */
export function modelTest(target: ModelTarget): void {
  const runs = Number(process.env.FC_RUNS ?? target.runs);
  const seed = process.env.FC_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FC_SEED ?? 1);
  const managers = fc.nat({ max: target.providers.length - 1 });
  const commands = [
    managers.map((m) => new TryCmd(m, false)),
    managers.map((m) => new TryCmd(m, true)),
    managers.map((m) => new WaitCmd(m)),
    managers.map((m) => new WaitCmd(m)),
    managers.map((m) => new BoundedWaitCmd(m, false)),
    managers.map((m) => new BoundedWaitCmd(m, true)),
    fc.nat().map((i) => new AbortQueuedCmd(i)),
    fc.nat().map((i) => new ReleaseCmd(i)),
    fc.nat().map((i) => new ReleaseCmd(i)),
    fc.nat().map((i) => new ExtendCmd(i)),
    fc.constant(new LapseCmd()),
  ];
  test(`${target.label}: random schedules agree with the reference model (${runs} runs, seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 20, size: 'max' }), async (cmds) => {
        const real = new Real(target, target.timing);
        try {
          await fc.asyncModelRun(() => ({ model: new Model(target.timing), real }), cmds);
        } finally {
          await real.cleanUp();
        }
      }),
      { numRuns: runs, seed, verbose: 1 },
    );
  }, 600_000);
}
