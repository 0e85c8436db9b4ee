/** Read/write locks (`mode: 'shared'`), tokens across modes, queues that give up, and inspect/peer views of groups. */
import { LockOptionsError } from '../../errors/lock.errors.js';
import type { LockGrant } from '../../contract/lock-provider.js';
import type { CaseRegistrar } from '../case-registrar.js';
import { sleep } from '../sleep.js';
import {
  above,
  below,
  check,
  checkEqual,
  granted,
  isFalse,
  isTrue,
  refused,
  rejection,
} from '../conformance-assert.js';
import { acquirer, shared, waiter } from './semaphore.cases.js';

export function readWriteCases({ test }: CaseRegistrar): void {
  test('shared holders hold together; plain and exclusive requests are refused while any remains, and shared ones while an exclusive holds', async (c) => {
    const { p, key } = c;
    const acq = acquirer(c);
    granted(await acq('r1', shared), 'a reader of a free key was refused');
    granted(await acq('r2', shared), 'a second reader was refused while a reader held');
    refused(await acq('plain'), 'a plain (exclusive) request entered while readers held');
    refused(await acq('sem', { limit: 2 }), 'a semaphore permit entered while readers held');
    isTrue(await p.release(key, 'r1'), 'release() by a reader answered false');
    refused(await acq('plain'), 'a plain request entered while a reader still held');
    isTrue(await p.release(key, 'r2'), 'release() by a reader answered false');
    granted(await acq('plain'), 'a plain request was refused after the last reader left'); // a plain lock is the write lock
    refused(await acq('r3', shared), 'a reader entered while a writer held');
    isTrue(await p.release(key, 'plain'), 'release() by the writer answered false');
    granted(await acq('s1', { limit: 2 }), 'a permit of a free semaphore was refused');
    refused(await acq('r3', shared), 'a reader entered while a semaphore permit was held'); // a semaphore permit is exclusive too
  });

  test('a queued exclusive waiter is not overtaken by later shared callers (no writer starvation)', async (c) => {
    const { p, key } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    granted(await acq('r1', shared), 'a reader of a free key was refused');
    const w = waitFor('writer');
    await sleep(200);
    refused(await acq('r2', shared), 'a reader overtook a queued writer');
    const r3 = waitFor('r3', shared);
    await sleep(200);
    isTrue(await p.release(key, 'r1'), 'release() by a reader answered false');
    granted(await w.promise, 'a queued writer was not woken by the last reader leaving');
    await sleep(200);
    check(!r3.done, 'a reader entered while the writer held');
    isTrue(await p.release(key, 'writer'), 'release() by the writer answered false');
    granted(await r3.promise, 'a queued reader was not woken by the writer leaving');
  });

  test('consecutive shared waiters at the head enter together on an exclusive release; the writer behind them waits for both', async (c) => {
    const { p, key } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    granted(await acq('x'), 'a plain request on a free key was refused');
    const r1 = waitFor('r1', shared);
    await sleep(100);
    const r2 = waitFor('r2', shared);
    await sleep(100);
    const w = waitFor('w');
    await sleep(100);
    const r3 = waitFor('r3', shared);
    await sleep(200);
    isTrue(await p.release(key, 'x'), 'release() by the writer answered false');
    granted(await r1.promise, 'the first queued reader was not woken by the writer leaving');
    granted(await r2.promise, 'the second queued reader did not enter together with the first');
    await sleep(200);
    checkEqual([w.done, r3.done], [false, false], 'the writer (or the reader behind it) entered while readers held');
    isTrue(await p.release(key, 'r1'), 'release() by a reader answered false');
    await sleep(200);
    check(!w.done, 'the writer entered while a reader still held');
    isTrue(await p.release(key, 'r2'), 'release() by a reader answered false');
    granted(await w.promise, 'the queued writer was not woken by the last reader leaving');
    await sleep(200);
    check(!r3.done, 'a reader entered while the writer held');
    isTrue(await p.release(key, 'w'), 'release() by the writer answered false');
    granted(await r3.promise, 'the queued reader was not woken by the writer leaving');
  });

  test('fencing tokens strictly increase across modes and permits', async (c) => {
    const { p, key } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    const phases: number[][] = [];
    const grant = async (g: Promise<LockGrant | null> | LockGrant | null) =>
      granted(await g, 'a grant was refused').fencingToken;
    phases.push([await grant(acq('r1', shared)), await grant(acq('r2', shared))]);
    await p.release(key, 'r1');
    await p.release(key, 'r2');
    phases.push([await grant(acq('plain'))]);
    await p.release(key, 'plain');
    phases.push([await grant(acq('s1', { limit: 2 })), await grant(acq('s2', { limit: 2 }))]);
    const sw = waitFor('s3', { limit: 2 });
    await sleep(100);
    await p.release(key, 's1');
    phases.push([await grant(sw.promise)]);
    await p.release(key, 's2');
    await p.release(key, 's3');
    granted(await acq('x'), 'a plain request on a free key was refused');
    const r3 = waitFor('r3', shared);
    const r4 = waitFor('r4', shared);
    await sleep(200);
    await p.release(key, 'x');
    phases.push([await grant(r3.promise), await grant(r4.promise)]);
    const flat = phases.flat();
    const shown = JSON.stringify(phases);
    checkEqual(new Set(flat).size, flat.length, `two grants got the same fencing token (tokens by phase: ${shown})`);
    for (let i = 1; i < phases.length; i++)
      above(
        Math.min(...phases[i]),
        Math.max(...phases[i - 1]),
        `a fencing token is not above every earlier one of the key (tokens by phase: ${shown})`,
      );
    above(phases[0][1], phases[0][0], `the second reader's fencing token is not above the first's (${shown})`);
    above(phases[2][1], phases[2][0], `the second permit's fencing token is not above the first's (${shown})`);
  });

  test('a wait that times out or is aborted leaves the queue, and the compatible waiters behind it enter at once', async (c) => {
    const { p, key } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    // Readers hold; a writer waits in front of a reader; the writer gives up: the reader joins the holders.
    for (const how of ['timeout', 'abort'] as const) {
      const k = `${key}:${how}`;
      const ac = new AbortController();
      granted(await acq('r1', { ...shared, key: k }), 'a reader of a free key was refused');
      const w = waitFor('w', how === 'timeout' ? { key: k, waitTimeout: 500 } : { key: k, signal: ac.signal });
      await sleep(100);
      const r2 = waitFor('r2', { ...shared, key: k });
      await sleep(100);
      if (how === 'abort') setTimeout(() => ac.abort(), 300);
      refused(await w.promise, `a writer's wait that ${how === 'timeout' ? 'timed out' : 'was aborted'} was granted`);
      granted(
        await r2.promise,
        `a reader queued behind a writer whose wait ${how === 'timeout' ? 'timed out' : 'was aborted'} did not enter`,
      );
      isTrue(await p.extend(k, 'r1', 30_000), 'the reader that held all along lost its hold'); // the reader that held all along still holds
    }
    // A semaphore: the waiter that gave up is skipped by the next release.
    const k = `${key}:sem`;
    granted(await acq('a', { key: k, limit: 1 }), 'a permit of a free semaphore was refused');
    const gaveUp = waitFor('gave-up', { key: k, limit: 1, waitTimeout: 300 });
    await sleep(100);
    const next = waitFor('next', { key: k, limit: 1 });
    refused(await gaveUp.promise, 'a wait past its waitTimeout was granted');
    await p.release(k, 'a');
    granted(await next.promise, 'the waiter behind one that timed out was not granted the released permit');
    isFalse(await p.extend(k, 'gave-up', 30_000), 'a waiter that timed out holds the permit');
  });

  test('inspect lists one entry per holder, with its mode and permits', async (c) => {
    const { p, key, inspectAll } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    const prefix = `${key}:`;
    for (const o of ['a', 'b'])
      granted(await acq(o, { key: `${prefix}sem`, limit: 3 }), 'a permit of a semaphore was refused');
    for (const o of ['r1', 'r2', 'r3'])
      granted(await acq(o, { ...shared, key: `${prefix}rw` }), 'a reader was refused');
    granted(await acq('p', { key: `${prefix}plain` }), 'a plain request on a free key was refused');
    const w = waitFor('w', { key: `${prefix}rw` });
    await sleep(300);
    const { locks } = await inspectAll(prefix);
    const view = locks
      .map((l) => `${l.key.slice(prefix.length)} ${l.owner} ${l.mode ?? 'exclusive'} ${l.permits} ${l.waiters}`)
      .sort();
    checkEqual(
      view,
      [
        'plain p exclusive 1 0',
        'rw r1 shared 1 1',
        'rw r2 shared 1 1',
        'rw r3 shared 1 1',
        'sem a exclusive 3 0',
        'sem b exclusive 3 0',
      ],
      'inspect() did not list one entry per holder as "key owner mode permits waiters"',
    );
    for (const l of locks)
      above(l.remainingMs, 10_000, `inspect() gave too little lease left for ${l.owner} (remainingMs of a 30 s lease)`);
    for (const o of ['r1', 'r2', 'r3'])
      isTrue(await p.release(`${prefix}rw`, o), 'release() by a reader answered false');
    granted(await w.promise, 'a queued writer was not woken by the last reader leaving');
    const after = (await inspectAll(`${prefix}rw`)).locks;
    checkEqual(
      after.map((l) => [l.owner, l.mode ?? 'exclusive', l.waiters]),
      [['w', 'exclusive', 0]],
      'inspect() did not show the woken writer as the only holder',
    );
  });

  test('inspect gives each group holder its own fencing token and since when it holds', async (c) => {
    const { p, key, inspectAll } = c;
    const acq = acquirer(c);
    const k = `${key}:since:sem`;
    const before = Date.now();
    const a = await acq('a', { key: k, limit: 3 });
    await sleep(1_200);
    const b = await acq('b', { key: k, limit: 3 });
    const r = await acq('r', { ...shared, key: `${key}:since:rw` });
    const { locks } = await inspectAll(`${key}:since:`);
    const of = (owner: string) => locks.find((l) => l.owner === owner)!;
    checkEqual(
      of('a')?.fencingToken,
      a!.fencingToken,
      "inspect() did not give a permit holder its grant's fencing token",
    );
    checkEqual(
      of('b')?.fencingToken,
      b!.fencingToken,
      "inspect() did not give a permit holder its grant's fencing token",
    );
    checkEqual(of('r')?.fencingToken, r!.fencingToken, "inspect() did not give a reader its grant's fencing token");
    // Wide margins: the store's clock and this process's, and a loaded machine.
    below(
      Math.abs(of('a').heldSince! - before),
      1_000,
      'inspect() gave a permit holder a heldSince far from its grant (ms off)',
    );
    check(
      of('b').heldSince! - of('a').heldSince! >= 700,
      'inspect() did not give each permit holder its own heldSince',
    );
    check(of('r').heldSince! >= of('a').heldSince!, 'inspect() gave a reader a heldSince before its grant');
    for (const [name, o] of [
      [k, 'a'],
      [k, 'b'],
      [`${key}:since:rw`, 'r'],
    ])
      isTrue(await p.release(name, o), 'release() by a holder answered false');
  });

  test('the peer (another connection) sees the same permits, readers and limit, and its waiter is woken by a release here', async (c) => {
    const { p, q, key } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    granted(await acq('a', { limit: 2 }), 'a permit of a free semaphore was refused');
    granted(await acq('b', { limit: 2 }, q), 'the peer was refused the second permit');
    refused(await acq('c', { limit: 2 }, q), 'the peer was granted a 3rd permit of a semaphore of limit 2');
    const err = await rejection(
      () => acq('c', { limit: 5 }, q),
      'the peer asked with another limit: the store did not throw LockOptionsError',
    );
    check(
      err instanceof LockOptionsError,
      `the peer asked with another limit: the store threw ${err.name}, not LockOptionsError`,
    );
    const w = waitFor('w', { limit: 2 }, q);
    await sleep(200);
    const started = Date.now();
    isTrue(await p.release(key, 'a'), 'release() of a permit by its owner answered false');
    granted(await w.promise, "the peer's waiter was not woken by a release here");
    below(Date.now() - started, 5_000, "the peer's waiter was woken long after the release (ms)");
    isTrue(await p.release(key, 'b'), 'a permit taken through the peer could not be released here'); // released here, taken there: one key
    const k = `${key}:rw`;
    granted(await acq('r1', { ...shared, key: k }), 'a reader of a free key was refused');
    granted(await acq('r2', { ...shared, key: k }, q), 'the peer was refused a second reader');
    refused(await acq('x', { key: k }, q), 'the peer was granted a writer while readers held');
    isTrue(await p.release(k, 'r2'), 'a reader taken through the peer could not be released here');
    isTrue(await q.release(k, 'r1'), 'a reader taken here could not be released through the peer');
    granted(await acq('x', { key: k }, q), 'the peer was refused a writer after the readers left');
  });
}
