/**
 * The leader-election engine on the in-memory store: two "replicas" are two
 * lock managers (and elections) on one InMemoryLockProvider.
 */
import {
  InMemoryLockProvider,
  LeaderElection,
  LockLostError,
  LockManager,
  LockOptionsError,
  LockProvider,
  LockStoreError,
  type Leadership,
  type LockAcquireRequest,
  type LockEvent,
  type LockLogger,
} from '../../lib/index.js';
import type { LeaderTerm } from '../../lib/leader/leadership.js';
import { MinimalLockProvider } from '../support/minimal-lock-provider.js';
import { sleep } from '../support/sleep.js';

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

class Logs implements LockLogger {
  readonly lines: string[] = [];
  debug(m: string) {
    this.lines.push(`debug ${m}`);
  }
  warn(m: string) {
    this.lines.push(`warn ${m}`);
  }
  error(m: string) {
    this.lines.push(`error ${m}`);
  }
}

/** A replica: its own lock manager and election on the shared store. */
function replica(provider: LockProvider, instanceId: string) {
  const events: LockEvent[] = [];
  const logs = new Logs();
  const locks = new LockManager({ provider, onEvent: (e) => events.push(e) });
  const election = new LeaderElection(locks, { instanceId, logger: logs });
  return { locks, election, events, logs };
}

/** A leader method that runs until its leadership ends, and records its terms. */
function loop(runs: Array<{ token: number; at: number }>) {
  return async (l: Leadership) => {
    runs.push({ token: l.fencingToken, at: Date.now() });
    await new Promise((resolve) => l.signal.addEventListener('abort', resolve, { once: true }));
  };
}

let memory: InMemoryLockProvider;
let replicas: Array<ReturnType<typeof replica>>;
beforeEach(() => {
  memory = new InMemoryLockProvider();
  replicas = [];
});
afterEach(async () => {
  await Promise.all(replicas.map((r) => r.election.stop()));
  await Promise.all(replicas.map((r) => r.locks.close()));
  await memory.close();
});
const make = (id: string, provider: LockProvider = memory) => {
  const r = replica(provider, id);
  replicas.push(r);
  return r;
};

test('one of two replicas leads; both see who; stopping the leader hands the name over at once, with a higher fencing token', async () => {
  const a = make('replica-a');
  const b = make('replica-b');
  const runsA: Array<{ token: number; at: number }> = [];
  const runsB: Array<{ token: number; at: number }> = [];
  let signalA: AbortSignal | undefined;
  a.election.campaign('relay', {
    ttl: 3_000,
    run: async (l) => {
      signalA = l.signal;
      await loop(runsA)(l);
    },
  });
  await until('a leads', () => runsA.length === 1);
  b.election.campaign('relay', { ttl: 3_000, run: loop(runsB) });
  await sleep(200);
  expect(runsB).toHaveLength(0);
  expect(a.election.isLeader('relay')).toBe(true);
  expect(b.election.isLeader('relay')).toBe(false);
  expect(await a.election.leader('relay')).toEqual({
    name: 'relay',
    instanceId: 'replica-a',
    self: true,
    remainingMs: expect.any(Number),
  });
  expect(await b.election.leader('relay')).toEqual({
    name: 'relay',
    instanceId: 'replica-a',
    self: false,
    remainingMs: expect.any(Number),
  });
  expect(a.events).toContainEqual({
    type: 'elected',
    name: 'relay',
    fencingToken: runsA[0].token,
    instanceId: 'replica-a',
  });

  const stoppedAt = Date.now();
  await a.election.stop();
  expect(signalA!.aborted).toBe(true);
  expect(signalA!.reason).toBeInstanceOf(LockLostError);
  await until('b leads', () => runsB.length === 1, 1_000);
  expect(runsB[0].at - stoppedAt).toBeLessThan(1_000);
  expect(runsB[0].token).toBeGreaterThan(runsA[0].token);
  expect((await a.election.leader('relay'))?.instanceId).toBe('replica-b');
  expect(a.events).toContainEqual(expect.objectContaining({ type: 'resigned', name: 'relay', reason: 'stopped' }));
});

test('a method that returns at once is not re-run in a loop: the replica gives the name up and campaigns again after retryDelay', async () => {
  const a = make('solo');
  const starts: number[] = [];
  a.election.campaign('warm-cache', { retryDelay: 300, run: () => void starts.push(Date.now()) });
  await sleep(1_100);
  expect(starts.length).toBeGreaterThanOrEqual(2);
  expect(starts.length).toBeLessThanOrEqual(4);
  for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(290);
  expect(a.events.filter((e) => e.type === 'resigned').map((e) => (e as { reason: string }).reason)).toContain(
    'returned',
  );
});

test('while one replica pauses after its method returned, another takes the name over at once', async () => {
  const a = make('a');
  const b = make('b');
  let aRuns = 0;
  const runsB: Array<{ token: number; at: number }> = [];
  a.election.campaign('job', { retryDelay: 5_000, run: () => void aRuns++ });
  await until('a ran', () => aRuns === 1);
  b.election.campaign('job', { run: loop(runsB) });
  await until('b leads', () => runsB.length === 1, 1_000);
  expect(aRuns).toBe(1);
});

test('a method that throws gives leadership up, is logged with the name, and runs again after retryDelay', async () => {
  const a = make('a');
  let runs = 0;
  a.election.campaign('flaky', {
    retryDelay: 200,
    run: () => {
      runs++;
      throw new Error('boom');
    },
  });
  await until('ran twice', () => runs >= 2, 2_000);
  expect(a.logs.lines.some((l) => l.startsWith('error') && l.includes('"flaky"') && l.includes('boom'))).toBe(true);
  expect(a.events).toContainEqual(expect.objectContaining({ type: 'resigned', name: 'flaky', reason: 'threw' }));
});

test('resign() aborts the signal; the other replica takes over; the resigned one campaigns again', async () => {
  const a = make('a');
  const b = make('b');
  const terms: Array<{ who: string; l: Leadership }> = [];
  const run = (who: string) => async (l: Leadership) => {
    terms.push({ who, l });
    await new Promise((resolve) => l.signal.addEventListener('abort', resolve, { once: true }));
  };
  a.election.campaign('x', { retryDelay: 100, run: run('a') });
  await until('first term', () => terms.length === 1);
  b.election.campaign('x', { retryDelay: 100, run: run('b') });
  await sleep(100);
  terms[0].l.resign();
  expect(terms[0].l.leading).toBe(false);
  await until('second term', () => terms.length === 2, 1_000);
  expect(terms[1].who).toBe('b');
  terms[1].l.resign();
  await until('third term', () => terms.length === 3, 1_000);
  expect(terms[2].who).toBe('a');
  expect(terms[2].l.fencingToken).toBeGreaterThan(terms[1].l.fencingToken);
});

test('a campaign without run leads until stopped; isLeader and leadership() follow', async () => {
  const a = make('a');
  const campaign = a.election.campaign('plain');
  await until('leads', () => campaign.isLeader);
  expect(a.election.leadership('plain')?.instanceId).toBe('a');
  await campaign.stop();
  expect(campaign.isLeader).toBe(false);
  expect(a.election.isLeader('plain')).toBe(false);
  expect(await a.election.leader('plain')).toBeNull();
});

test('InMemoryLockProvider.hold() with an instance id makes "another replica" the leader', async () => {
  const a = make('me');
  const release = await memory.hold('leader:relay', { instanceId: 'replica-7' });
  const runs: Array<{ token: number; at: number }> = [];
  a.election.campaign('relay', { run: loop(runs) });
  await sleep(200);
  expect(runs).toHaveLength(0);
  expect(await a.election.leader('relay')).toEqual({
    name: 'relay',
    instanceId: 'replica-7',
    self: false,
    remainingMs: expect.any(Number),
  });
  await release();
  await until('leads after the hold ends', () => runs.length === 1, 1_000);
});

test('a process paused past its lease knows it no longer leads on its first read, before any timer ran', async () => {
  const a = make('a');
  let leadership: Leadership | undefined;
  a.election.campaign('p', { ttl: 400, run: loop([]) });
  await until('leads', () => (leadership = a.election.leadership('p')) !== undefined);
  const term = leadership as LeaderTerm;
  // Block the event loop (as a GC pause or SIGSTOP would) until the local lease has ended.
  while (performance.now() < term.lock.leaseEnd + 20) {
    // busy
  }
  expect(leadership!.leading).toBe(false);
  expect(leadership!.signal.aborted).toBe(true);
  expect(a.election.isLeader('p')).toBe(false);
});

/** The in-memory store, with a switch that makes every call fail like an unreachable store. */
class Unreachable extends LockProvider {
  readonly kind = 'memory';
  down = false;
  constructor(private readonly inner: InMemoryLockProvider) {
    super();
  }
  private check(op: string) {
    if (this.down) throw new LockStoreError(op, 'connection refused');
  }
  acquire(r: LockAcquireRequest) {
    this.check('acquire');
    return this.inner.acquire(r);
  }
  extend(key: string, owner: string, ttl: number) {
    this.check('extend');
    return this.inner.extend(key, owner, ttl);
  }
  release(key: string, owner: string) {
    this.check('release');
    return this.inner.release(key, owner);
  }
  holder(key: string) {
    this.check('holder');
    return this.inner.holder(key);
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}

test('a leader that cannot renew aborts its signal before its lease ends locally; the next leader has a higher token', async () => {
  const store = new Unreachable(memory);
  const a = make('a', store);
  const b = make('b');
  const ttl = 900;
  let aborted: { at: number; leaseEnd: number; reason: unknown } | undefined;
  let tokenA = 0;
  a.election.campaign('r', {
    ttl,
    run: async (l) => {
      tokenA = l.fencingToken;
      const term = l as LeaderTerm;
      await new Promise<void>((resolve) =>
        l.signal.addEventListener('abort', () => {
          aborted = { at: performance.now(), leaseEnd: term.lock.leaseEnd, reason: l.signal.reason };
          resolve();
        }),
      );
    },
  });
  await until('a leads', () => tokenA > 0);
  await sleep(400); // renewed at least once
  store.down = true;
  const runsB: Array<{ token: number; at: number }> = [];
  b.election.campaign('r', { ttl, run: loop(runsB) });
  await until('a stepped down', () => aborted !== undefined, 3_000);
  expect(aborted!.at).toBeLessThan(aborted!.leaseEnd);
  expect(aborted!.reason).toBeInstanceOf(LockLostError);
  expect(String((aborted!.reason as Error).message)).toMatch(/stepped down/);
  expect(a.events).toContainEqual(expect.objectContaining({ type: 'resigned', name: 'r', reason: 'lost' }));
  await until('b leads once the lease ended on the store', () => runsB.length === 1, 3_000);
  expect(runsB[0].token).toBeGreaterThan(tokenA);
  expect(a.election.isLeader('r')).toBe(false);
  store.down = false;
});

test('store failures while campaigning are retried every retryDelay, logged once', async () => {
  const store = new Unreachable(memory);
  store.down = true;
  const a = make('a', store);
  const runs: Array<{ token: number; at: number }> = [];
  a.election.campaign('c', { retryDelay: 100, run: loop(runs) });
  await sleep(450);
  expect(a.logs.lines.filter((l) => l.startsWith('warn') && l.includes('"c"'))).toHaveLength(1);
  store.down = false;
  await until('leads once the store answers', () => runs.length === 1, 2_000);
});

test('invalid names and options, and a second campaign for a name, fail with LockOptionsError', async () => {
  const a = make('a');
  expect(() => a.election.campaign('')).toThrow(LockOptionsError);
  expect(() => a.election.campaign('n', { ttl: 0 })).toThrow(/ttl must be a finite number/);
  expect(() => a.election.campaign('n', { retryDelay: -1 })).toThrow(/retryDelay/);
  expect(() => a.election.campaign('n', { ttl: 2 ** 31 })).toThrow(
    /ttl must be a finite number of milliseconds > 0 and at most 2147483647 .*, got 2147483648\./,
  );
  expect(() => a.election.campaign('n', { retryDelay: 1e20 })).toThrow(/retryDelay must be .* at most 2147483647/);
  expect(() => a.election.campaign('n\u0000')).toThrow(
    /the leader name "n\\u0000" holds a control character U\+0000 at index 1/,
  );
  expect(() => a.election.campaign('\udc00')).toThrow(/the leader name "\\udc00" holds a lone surrogate U\+DC00/);
  expect(() => a.election.campaign('n'.repeat(513))).toThrow(/a leader name must be at most 512 characters/);
  expect(() => a.election.campaign('n', { instanceId: '' } as never)).toThrow(/instanceId/);
  expect(() => a.election.campaign('n', { tll: 5 } as never)).toThrow(/unknown option "tll"/);
  a.election.campaign('n');
  expect(() => a.election.campaign('n')).toThrow(/already campaigns for "n"/);
  expect(() => new LeaderElection(a.locks, { instanceId: '' })).toThrow(LockOptionsError);
});

test('leader() on a store that cannot tell who holds a lock fails with a message that says so', async () => {
  const a = make('a', new MinimalLockProvider('custom'));
  await expect(a.election.leader('x')).rejects.toThrow(/"custom" store cannot tell who holds a lock/);
});

test('the default instance id is <hostname>:<pid>', () => {
  const a = new LeaderElection(new LockManager({ provider: memory }));
  expect(a.instanceId).toMatch(new RegExp(`^.+:${process.pid}$`));
});
