/**
 * The process scenarios every store must pass (SIGKILL, SIGTERM and SIGSTOP
 * of the leader), as jest tests over replicas that `cluster` starts.
 */
import { type Replicas } from './replicas.js';
import { sleep } from '../support/sleep.js';

export function leaderProcessScenarios(cluster: (name: string, n: number) => Promise<Replicas>, ttl: number): void {
  test('SIGKILL the leader: another replica leads within the lease plus a margin, with a higher fencing token', async () => {
    const c = await cluster('kill', 3);
    const first = await c.elected(0, 10_000);
    await sleep(500);
    const killedAt = Date.now();
    c.get(first.replica).signal('SIGKILL');
    const next = await c.elected(killedAt, ttl + 5_000, first.replica);
    // The lease plus a margin for a busy machine (the killed leader renewed at most a third of a lease ago).
    c.expectWithin('the takeover after SIGKILL', next.at - killedAt, ttl + 2_000);
    expect(next.token).toBeGreaterThan(first.token);
    await sleep(300);
    c.expectNoOverlap();
  }, 40_000);

  test('SIGTERM the leader (graceful shutdown): another replica leads within a second', async () => {
    const c = await cluster('term', 2);
    const first = await c.elected(0, 10_000);
    await sleep(500);
    const termAt = Date.now();
    c.get(first.replica).signal('SIGTERM');
    const next = await c.elected(termAt, 5_000, first.replica);
    c.expectWithin('the takeover after SIGTERM', next.at - termAt, 1_000);
    expect(next.token).toBeGreaterThan(first.token);
    await c.get(first.replica).exited;
    await sleep(200);
    c.expectNoOverlap();
  }, 40_000);

  test('a leader paused (SIGSTOP) past its lease: another leads with a higher token; once resumed, the paused one stops at once', async () => {
    const c = await cluster('pause', 2);
    const first = await c.elected(0, 10_000);
    await sleep(500);
    const stoppedAt = Date.now();
    const paused = c.get(first.replica);
    paused.signal('SIGSTOP');
    const next = await c.elected(stoppedAt, ttl + 5_000, first.replica);
    expect(next.token).toBeGreaterThan(first.token);
    await sleep(500);
    paused.signal('SIGCONT');
    const lost = await c.first(
      '"lost" from the resumed leader',
      (e) => e.kind === 'lost' && e.replica === first.replica && e.token === first.token,
      5_000,
    );
    expect(lost.reason).toMatch(/leadership ended/);
    await sleep(300);
    // Not one tick of its old term after it was stopped (the tick clock is read before the lease check).
    expect(c.ticks(first.replica, stoppedAt + 50).filter((t) => t.token === first.token)).toEqual([]);
    c.expectNoOverlap();
  }, 40_000);
}
