/**
 * Every error the library throws says what happened, to which lock or
 * option, and what to do. One row per throw site a user can reach (the store
 * causes have their own tests beside their stores, with real servers:
 * test/stores/{redis,postgres}/misconfiguration.spec.ts).
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import {
  InMemoryLockProvider,
  LockError,
  LockLostError,
  LockManager,
  LockModule,
  LockOptionsError,
  LockStoreError,
  Locked,
} from '../../lib/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { MinimalLockProvider } from '../support/minimal-lock-provider.js';

/** Words that tell a user what to do next. */
const ACTION =
  /\b(must|use|set|pass|import|check|retry|raise|create|grant|install|release|call|give|fix|make|move|build|stop|leave|add)\b/i;

function fail(message: string): never {
  throw new Error(message);
}

async function errorOf(run: () => unknown): Promise<Error> {
  try {
    await run();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

const cases: Array<[what: string, run: () => unknown, subject: RegExp, type: new (...args: never[]) => Error]> = [
  [
    'a held lock',
    async () => {
      const memory = new InMemoryLockProvider();
      await memory.hold('job');
      await new LockManager({ provider: memory }).withLock('job', () => 1, { onHeld: 'throw' });
    },
    /Lock "job"/,
    LockError,
  ],
  [
    'a wait that ran out',
    async () => {
      const memory = new InMemoryLockProvider();
      await memory.hold('job');
      await new LockManager({ provider: memory }).acquire('job', { waitTimeout: 20 });
    },
    /lock "job"/,
    LockError,
  ],
  [
    'a nested call for the same lock',
    async () => {
      const locks = new LockManager({ provider: new InMemoryLockProvider() });
      await locks.withLock('job', () => locks.withLock('job', () => 1));
    },
    /Lock "job"/,
    LockError,
  ],
  [
    'a hold() on a held lock',
    async () => {
      const memory = new InMemoryLockProvider();
      await memory.hold('job');
      await memory.hold('job');
    },
    /hold\("job"\)/,
    LockError,
  ],
  [
    'a lock requested after close',
    async () => {
      const locks = new LockManager({ provider: new InMemoryLockProvider() });
      await locks.close();
      await locks.withLock('job', () => 1);
    },
    /Lock "job"/,
    LockError,
  ],
  [
    'withLock without a function',
    () => new LockManager({ provider: new InMemoryLockProvider() }).withLock('job', 'run' as never),
    /withLock\("job"\)/,
    LockOptionsError,
  ],
  [
    'an empty lock name',
    () => new LockManager({ provider: new InMemoryLockProvider() }).withLock('', () => 1),
    /withLock\(\): a lock name/,
    LockOptionsError,
  ],
  [
    'a bad call option',
    () => new LockManager({ provider: new InMemoryLockProvider() }).withLock('job', () => 1, { ttl: -5 }),
    /withLock\("job"\): ttl must be/,
    LockOptionsError,
  ],
  ['an unknown module option', () => LockModule.forRoot({ tll: 5 } as never), /unknown option "tll"/, LockOptionsError],
  [
    'a bad isGlobal',
    () => LockModule.forRoot({ isGlobal: 'yes' as never }),
    /isGlobal must be true or false, got "yes"/,
    LockOptionsError,
  ],
  [
    '@Locked on a non-method',
    () => Locked('x')({}, 'field', { value: 42 }),
    /@Locked\(\) on Object\.field/,
    LockOptionsError,
  ],
  ['@Locked with bad arguments', () => Locked(42 as never), /@Locked\(\): pass a name/, LockOptionsError],
  [
    '@Locked with name and nameFromContext',
    () => Locked({ name: 'x', nameFromContext: () => 'y' })({}, 'run', { value: () => 1 }),
    /@Locked\(\) on Object\.run: give either name or nameFromContext/,
    LockOptionsError,
  ],
  [
    'a nameFromContext that threw (no context: a direct call)',
    async () => {
      class Reports {
        run() {}
      }
      const descriptor = Object.getOwnPropertyDescriptor(Reports.prototype, 'run')!;
      const locked = Locked({ nameFromContext: (ctx) => ctx?.getType() ?? fail('no request') })(
        Reports.prototype,
        'run',
        descriptor,
      );
      Object.defineProperty(Reports.prototype, 'run', locked as PropertyDescriptor);
      const ref = await Test.createTestingModule({ imports: [LockModule.forRoot()], providers: [Reports] }).compile();
      try {
        await ref.get(Reports).run();
      } finally {
        await ref.close();
      }
    },
    /Reports\.run: the nameFromContext function threw/,
    LockOptionsError,
  ],
  [
    'a @Locked method on an object Nest did not create',
    async () => {
      class Plain {
        run() {}
      }
      const descriptor = Object.getOwnPropertyDescriptor(Plain.prototype, 'run')!;
      Object.defineProperty(
        Plain.prototype,
        'run',
        Locked('plain')(Plain.prototype, 'run', descriptor) as PropertyDescriptor,
      );
      await new Plain().run();
    },
    /Plain\.run: no LockService/,
    LockOptionsError,
  ],
  [
    'a Redis provider option',
    () => new RedisLockProvider({ redis: 'redis://127.0.0.1:1', commandTimeout: -1 }),
    /RedisLockProvider: commandTimeout/,
    LockOptionsError,
  ],
  [
    'a PostgreSQL table name',
    () => new PostgresLockProvider({ connection: 'postgres://db/app', tableName: 'bad name' }),
    /tableName must be an identifier/,
    LockOptionsError,
  ],
  [
    'a PostgreSQL prune age',
    () => new PostgresLockProvider({ connection: 'postgres://db/app' }).prune(5),
    /prune: olderThanMs/,
    LockOptionsError,
  ],
  [
    'a PostgreSQL background pruning age',
    () => new PostgresLockProvider({ connection: 'postgres://db/app', prune: { olderThanMs: 1_000 } }),
    /PostgresLockProvider: prune\.olderThanMs must be/,
    LockOptionsError,
  ],
  [
    'a PostgreSQL background pruning interval',
    () => new PostgresLockProvider({ connection: 'postgres://db/app', prune: { everyMs: 10 } }),
    /PostgresLockProvider: prune\.everyMs must be a number of milliseconds from 1000/,
    LockOptionsError,
  ],
  [
    'a PostgreSQL background pruning option misspelt',
    () => new PostgresLockProvider({ connection: 'postgres://db/app', prune: { olderThan: 7_200_000 } as never }),
    /PostgresLockProvider: prune: unknown option "olderThan"; use one of: olderThanMs, everyMs/,
    LockOptionsError,
  ],
  [
    'a PostgreSQL prune option of another type',
    () => new PostgresLockProvider({ connection: 'postgres://db/app', prune: 'daily' as never }),
    /PostgresLockProvider: prune must be true, false or \{ olderThanMs\?, everyMs\? \}, got "daily"/,
    LockOptionsError,
  ],
  [
    'a closed provider',
    async () => {
      const provider = new PostgresLockProvider({ connection: 'postgres://db/app' });
      await provider.close();
      await provider.ping();
    },
    /PostgreSQL lock provider is closed/,
    LockStoreError,
  ],
  [
    'a limit with a shared mode',
    () =>
      new LockManager({ provider: new InMemoryLockProvider() }).withLock('job', () => 1, { limit: 3, mode: 'shared' }),
    /withLock\("job"\): limit \(3\)/,
    LockOptionsError,
  ],
  [
    'a semaphore on a store that cannot take one',
    () => new LockManager({ provider: new MinimalLockProvider('custom') }).withLock('job', () => 1, { limit: 3 }),
    /Lock "job": the "custom" store/,
    LockOptionsError,
  ],
  [
    'a shared lock on a store that cannot take one',
    () => new LockManager({ provider: new MinimalLockProvider('custom') }).withLock('job', () => 1, { mode: 'shared' }),
    /Lock "job": the "custom" store/,
    LockOptionsError,
  ],
  [
    'a lease that ran out while the process did not run',
    async () => {
      const lock = await new LockManager({
        provider: new InMemoryLockProvider(),
        logger: { debug() {}, warn() {}, error() {} },
      }).acquire('job', {
        ttl: 100,
        renew: false,
      });
      const signal = lock.signal;
      const end = performance.now() + 300;
      while (performance.now() < end); // a long synchronous task
      signal.throwIfAborted();
    },
    /Lock "job" was lost: its 100 ms lease ended \(renew is off\); the lease ran out while this process was not running .*: it ran again \d+ ms after/,
    LockLostError,
  ],
];

describe('every error says what happened, to what, and what to do', () => {
  test.each(cases)('%s', async (_what, run, subject, type) => {
    const error = await errorOf(run);
    expect(error).toBeInstanceOf(type);
    expect(error.message).toMatch(subject);
    expect(error.message).toMatch(ACTION);
    expect(error.message).not.toMatch(/undefined|\[object /);
  });

  test('a missing module, at boot', async () => {
    class Jobs {
      run() {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Jobs.prototype, 'run')!;
    Object.defineProperty(
      Jobs.prototype,
      'run',
      Locked('jobs')(Jobs.prototype, 'run', descriptor) as PropertyDescriptor,
    );
    const error = await errorOf(() => Test.createTestingModule({ providers: [Jobs] }).compile());
    expect(error.message).toMatch(/Jobs\.run: import LockModule\.forRoot\(\)/);
  });
});
