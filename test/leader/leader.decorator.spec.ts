/**
 * `@Leader` and `LeaderService` in Nest apps on the in-memory store: two
 * apps on one InMemoryLockProvider play two replicas.
 */
import 'reflect-metadata';
import { Injectable, Module, SetMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { INestApplicationContext } from '@nestjs/common';
import {
  InMemoryLockProvider,
  Leader,
  LeaderService,
  LockModule,
  LockOptionsError,
  type Leadership,
  type LockEvent,
} from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

interface Term {
  instanceId: string;
  fencingToken: number;
  startedAt: number;
  endedAt?: number;
  reason?: unknown;
}

@Injectable()
class OutboxRelay {
  readonly terms: Term[] = [];

  @SetMetadata('other-decorator', 'kept')
  @Leader('outbox-relay', { ttl: 2_000, retryDelay: 200 })
  async relay(leadership: Leadership): Promise<void> {
    const term: Term = {
      instanceId: leadership.instanceId,
      fencingToken: leadership.fencingToken,
      startedAt: Date.now(),
    };
    this.terms.push(term);
    // Long-running: until leadership ends.
    await new Promise((resolve) => leadership.signal.addEventListener('abort', resolve, { once: true }));
    term.endedAt = Date.now();
    term.reason = leadership.signal.reason;
  }
}

async function app(
  memory: InMemoryLockProvider,
  instanceId: string,
  events: LockEvent[] = [],
): Promise<INestApplicationContext> {
  @Module({
    imports: [LockModule.forRoot({ provider: memory, instanceId, onEvent: (e) => events.push(e) })],
    providers: [OutboxRelay],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  return moduleRef.createNestApplication().init();
}

let memory: InMemoryLockProvider;
const apps: INestApplicationContext[] = [];
beforeEach(() => {
  memory = new InMemoryLockProvider();
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
  await memory.close();
});

test('the @Leader method runs on one replica, with its leadership, without holding up bootstrap', async () => {
  const events: LockEvent[] = [];
  const a = await app(memory, 'replica-a', events);
  apps.push(a);
  const relayA = a.get(OutboxRelay);
  await until('a leads', () => relayA.terms.length === 1);
  expect(relayA.terms[0]).toMatchObject({ instanceId: 'replica-a' });
  expect(events).toContainEqual({
    type: 'elected',
    name: 'outbox-relay',
    fencingToken: relayA.terms[0].fencingToken,
    instanceId: 'replica-a',
  });

  const b = await app(memory, 'replica-b');
  apps.push(b);
  await sleep(300);
  expect(b.get(OutboxRelay).terms).toHaveLength(0);
  const leaders = b.get(LeaderService);
  expect(leaders.instanceId).toBe('replica-b');
  expect(leaders.isLeader('outbox-relay')).toBe(false);
  expect(a.get(LeaderService).isLeader('outbox-relay')).toBe(true);
  expect(await leaders.leader('outbox-relay')).toMatchObject({ instanceId: 'replica-a', self: false });
});

test('app.close() on the leader: its method is told to stop, and another replica leads at once with a higher token', async () => {
  const events: LockEvent[] = [];
  const a = await app(memory, 'replica-a', events);
  const relayA = a.get(OutboxRelay);
  await until('a leads', () => relayA.terms.length === 1);
  const b = await app(memory, 'replica-b');
  apps.push(b);
  const relayB = b.get(OutboxRelay);
  await sleep(100);
  const closing = Date.now();
  await a.close();
  expect(relayA.terms[0].endedAt).toBeDefined();
  expect(String((relayA.terms[0].reason as Error).message)).toMatch(/leadership ended/);
  expect(events).toContainEqual(expect.objectContaining({ type: 'resigned', name: 'outbox-relay', reason: 'stopped' }));
  await until('b leads', () => relayB.terms.length === 1, 1_000);
  expect(relayB.terms[0].startedAt - closing).toBeLessThan(1_000);
  expect(relayB.terms[0].fencingToken).toBeGreaterThan(relayA.terms[0].fencingToken);
});

test('LeaderService: campaign, isLeader, leadership and leader for code that is not a @Leader method', async () => {
  const a = await app(memory, 'replica-a');
  apps.push(a);
  const leaders = a.get(LeaderService);
  const campaign = leaders.campaign('maintenance', { ttl: 1_000 });
  await until('leads', () => leaders.isLeader('maintenance'));
  expect(leaders.leadership('maintenance')?.fencingToken).toEqual(expect.any(Number));
  expect(await leaders.leader('maintenance')).toMatchObject({ instanceId: 'replica-a', self: true });
  await campaign.stop();
  expect(leaders.isLeader('maintenance')).toBe(false);
  expect(await leaders.leader('maintenance')).toBeNull();
});

test("@Leader keeps the method as it is, with other decorators' metadata", () => {
  const method = OutboxRelay.prototype.relay;
  expect(Reflect.getMetadata('other-decorator', method)).toBe('kept');
});

test('invalid uses fail with LockOptionsError that says what to fix', () => {
  expect(() => Leader('')).toThrow(LockOptionsError);
  expect(() => Leader('x', { ttl: -5 })).toThrow(/ttl must be a finite number/);
  expect(() => Leader('x', { ttl: 2 ** 31 })).toThrow(
    /ttl must be .* at most 2147483647 \(2\^31 − 1 ms, about 24\.8 days\), got 2147483648/,
  );
  expect(() => Leader('x\n')).toThrow(/the leader name "x\\n" holds a control character U\+000A/);
  expect(() => Leader('x', { run: () => {} } as never)).toThrow(/run is not an option of @Leader/);
  expect(() => {
    class Static {
      @Leader('s')
      static go() {}
    }
    return Static;
  }).toThrow(/static methods cannot lead/);
  expect(() => LockModule.forRoot({ instanceId: '' })).toThrow(/instanceId must be a non-empty string/);
});
