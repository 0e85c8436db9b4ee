/**
 * Redis under Sentinel, as a deployment: a master, a replica and three
 * Sentinels that this file starts on free ports. Locking through Sentinel,
 * then the master SIGKILLed under load: calls fail with LockStoreError
 * within their bound during the gap, work again after the promotion,
 * waiters in other instances are woken by release, and fencing tokens keep
 * growing whether the promoted replica had the counter (but lost the last
 * grants) or never had it.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import type { RedisOptions } from 'ioredis';
import { LockAcquireError, LockManager, LockModule, LockService, LockStoreError } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { tokenOf } from '../../support/fencing.js';
import { RedisSentinelSetup } from '../../support/redis-server.js';
import { ChildLines, spawnFixture } from '../../support/child-process.js';
import { sleep } from '../../support/sleep.js';

const COMMAND_TIMEOUT = 1_000;
let setup: RedisSentinelSetup;
let redis: RedisOptions;
const managers: LockManager[] = [];

/** A manager on connections of its own, through the Sentinels. */
function manager(): LockManager {
  const m = new LockManager({ provider: new RedisLockProvider({ redis, commandTimeout: COMMAND_TIMEOUT }) });
  managers.push(m);
  return m;
}

beforeAll(async () => {
  setup = await RedisSentinelSetup.start('locks');
  redis = { sentinels: setup.sentinelNodes, name: setup.name };
}, 60_000);
afterAll(async () => {
  for (const m of managers) {
    await m.close();
    await m.provider.close();
  }
  await setup?.stop();
});

test('LockModule.forRoot({ redis: { sentinels, name } }) locks on the master the Sentinels name', async () => {
  const moduleRef = await Test.createTestingModule({
    imports: [LockModule.forRoot({ redis, commandTimeout: COMMAND_TIMEOUT })],
  }).compile();
  await moduleRef.init();
  try {
    const locks = moduleRef.get(LockService);
    const seen = await locks.withLock('through-sentinel', async (lock) => {
      expect((await setup.master.command('exists', '{lock:through-sentinel}')).trim()).toBe('1');
      return lock.fencingToken;
    });
    expect(seen).toBeGreaterThan(0);
  } finally {
    await moduleRef.close();
  }
});

test('the master SIGKILLed under load: LockStoreError within the bound, locking again after the promotion, waiters woken, tokens growing', async () => {
  const a = manager();
  const b = manager();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const child = new ChildLines(
    spawnFixture(new URL('./fixtures/lock-child.js', import.meta.url), {
      redis,
      name: 'woken',
      ttl: 30_000,
      wait: true,
      go: true,
    }),
  );
  try {
    await child.next('ready'); // connected to the old master: it has to find the new one by itself

    // b has waited before (its subscriber connection must follow the failover too).
    const first = await a.acquire('warm', { ttl: 30_000 });
    const warmed = b.acquire('warm', { waitTimeout: 10_000 });
    await sleep(200);
    await first.release();
    await (await warmed).release();

    // Fencing: x's counter reaches the replica, then its last grants do not; y never reaches it.
    const x1 = await tokenOf(a, 'x');
    expect((await setup.master.command('wait', 1, 5_000)).trim()).toBe('1');
    setup.replica.pause();
    await setup.master.command('client', 'kill', 'type', 'replica');
    const x2 = await tokenOf(a, 'x');
    expect(x2).toBeGreaterThan(x1);
    const y1 = await tokenOf(a, 'y');

    // Load: four callers, each on a name of its own, lock after lock.
    type Outcome = { ok: boolean; error?: unknown; at: number; ms: number };
    const outcomes: Outcome[] = [];
    let running = true;
    const loops = [a, b, a, b].map(async (m, i) => {
      while (running) {
        const started = Date.now();
        try {
          await m.withLock(`load-${i}`, () => sleep(5), { onHeld: 'wait', waitTimeout: 10_000 });
          outcomes.push({ ok: true, at: started, ms: Date.now() - started });
        } catch (error) {
          outcomes.push({ ok: false, error, at: started, ms: Date.now() - started });
          await sleep(50);
        }
      }
    });
    await sleep(300);
    const killedAt = Date.now();
    await setup.master.kill();
    setup.replica.resume();

    // Back within seconds: Sentinel promotes the replica, and the clients find it.
    const deadline = killedAt + 30_000;
    while (!outcomes.some((o) => o.ok && o.at > killedAt + 100) && Date.now() < deadline) await sleep(100);
    const back = outcomes.find((o) => o.ok && o.at > killedAt + 100);
    expect(back).toBeDefined();
    expect(back!.at - killedAt).toBeLessThan(20_000);
    await sleep(500);
    running = false;
    await Promise.all(loops);
    expect(await setup.masterPort()).toBe(setup.replica.port);

    const failures = outcomes.filter((o) => !o.ok);
    expect(failures.length).toBeGreaterThan(0); // the gap was seen
    for (const f of failures) {
      expect(f.error).toBeInstanceOf(LockStoreError);
      expect(f.error).not.toBeInstanceOf(LockAcquireError);
      // Bounded: one acquire within commandTimeout (a release that fails is logged, not thrown), with room for a busy machine.
      expect(f.ms).toBeLessThan(COMMAND_TIMEOUT + 1_500);
    }

    // Tokens after the failover: above every token granted before it, lost or not.
    expect(await tokenOf(a, 'x')).toBeGreaterThan(x2);
    expect(await tokenOf(b, 'y')).toBeGreaterThan(y1);

    // Waiters in other instances are woken by release: another process, and another manager of this one.
    const held = await a.acquire('woken', { ttl: 30_000 });
    child.child.stdin!.write('go\n');
    await child.next('waiting');
    await sleep(500);
    const released = Date.now();
    await held.release();
    const childToken = Number(await child.next('held', 10_000));
    expect(childToken).toBeGreaterThan(held.fencingToken);
    expect(Date.now() - released).toBeLessThan(5_000); // by release, not by the 30 s lease

    const h2 = await a.acquire('woken-here', { ttl: 30_000 });
    const waiting = b.acquire('woken-here', { waitTimeout: 20_000 });
    await sleep(300);
    const releasedHere = Date.now();
    await h2.release();
    const got = await waiting;
    expect(Date.now() - releasedHere).toBeLessThan(5_000);
    expect(got.fencingToken).toBeGreaterThan(h2.fencingToken);
    await got.release();

    await sleep(100);
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    child.child.kill('SIGKILL');
  }
}, 90_000);
