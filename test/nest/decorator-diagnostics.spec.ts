/**
 * What a user gets wrong with @Locked is named: a missing LockModule.forRoot()
 * (naming the class and method), a lock name built from an object (rejected),
 * a name with an undefined/null/NaN segment (warned once per method), and a
 * burst of calls that find the lock held (one log line, then a count).
 */
import 'reflect-metadata';
import { Controller, Injectable, Logger, Module, Post, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  InMemoryLockProvider,
  LockAcquireError,
  LockExceptionFilter,
  LockModule,
  LockOptionsError,
  LockProvider,
  LockService,
  Locked,
} from '../../lib/index.js';
import { RecordingLogger } from '../support/recording-logger.js';

describe('a missing LockModule.forRoot()', () => {
  test('fails the boot with a message that says to import it, naming the class and method', async () => {
    @Controller('jobs')
    class JobsController {
      @Post()
      @Locked('jobs')
      run() {
        return 'ran';
      }
    }
    @Module({ controllers: [JobsController] })
    class AppModule {}
    const compiled = Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(compiled).rejects.toThrow(
      /JobsController.*LockService, for @Locked on JobsController\.run: import LockModule\.forRoot\(\) \(or LockModule\.forRootAsync\(\)\) in the app's root module/s,
    );
  });

  test('a subclass with @Locked methods of its own gets both injections; the app works with the module', async () => {
    @Injectable()
    class Base {
      @Locked('base')
      base() {
        return 'base';
      }
    }
    @Injectable()
    class Derived extends Base {
      @Locked('derived')
      derived() {
        return 'derived';
      }
    }
    const ref = await Test.createTestingModule({ imports: [LockModule.forRoot()], providers: [Derived] }).compile();
    const d = ref.get(Derived);
    expect(await d.base()).toBe('base');
    expect(await d.derived()).toBe('derived');
    await ref.close();
  });
});

describe('lock names that are bugs', () => {
  let logger: RecordingLogger;
  beforeEach(() => {
    logger = new RecordingLogger();
  });
  afterEach(() => Logger.overrideLogger(true));

  @Injectable()
  class Orders {
    runs = 0;
    @Locked((order: unknown) => `order:${order}`)
    byObject(_order: unknown) {
      this.runs++;
    }

    @Locked((user: { id?: number }) => `user:${user.id}`)
    byUser(_user: { id?: number }) {
      this.runs++;
    }

    @Locked((a: number) => `calc/${a * 2}/total`)
    byNumber(_a: number) {
      this.runs++;
    }
  }

  async function orders() {
    const ref = await Test.createTestingModule({ imports: [LockModule.forRoot()], providers: [Orders] })
      .setLogger(logger)
      .compile();
    return { ref, orders: ref.get(Orders) };
  }

  test('a name with "[object " is rejected with LockOptionsError naming the method and the name, and the method does not run', async () => {
    const { ref, orders: o } = await orders();
    const failed = (o.byObject({ id: 7 }) as unknown as Promise<void>).then(
      () => undefined,
      (err: unknown) => err,
    );
    const error = await failed;
    expect(error).toBeInstanceOf(LockOptionsError);
    expect((error as Error).message).toMatch(
      /@Locked\(\) on Orders\.byObject .*"order:\[object Object\]".*stringified object/,
    );
    expect(o.runs).toBe(0);
    expect(() => Locked('job:[object Object]')).not.toThrow(); // (the factory takes any options...)
    expect(() => Locked('job:[object Object]')({}, 'm', { value: () => undefined })).toThrow(/stringified object/); // ...the name is checked on decoration
    await expect(ref.get(LockService).withLock('x:[object Object]', () => 1)).rejects.toThrow(LockOptionsError);
    await ref.close();
  });

  test('a name with an undefined, null or NaN segment warns once per method, and the call runs', async () => {
    const { ref, orders: o } = await orders();
    for (let i = 0; i < 5; i++) await o.byUser({});
    for (let i = 0; i < 5; i++) await o.byNumber(Number.NaN);
    await o.byUser({ id: 1 });
    expect(o.runs).toBe(11);
    const warnings = logger.lines('warn', '@Locked() on Orders.');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/Orders\.byUser: the lock name "user:undefined" has a "undefined" segment/);
    expect(warnings[1]).toMatch(/Orders\.byNumber: the lock name "calc\/NaN\/total" has a "NaN" segment/);
    await ref.close();
  });

  test('names that merely contain those words do not warn', async () => {
    const { ref } = await orders();
    const locks = ref.get(LockService);
    for (const name of ['nullable-report', 'undefinedness', 'NaNa:1', 'job:null_safe'])
      await locks.withLock(name, () => 1);
    expect(logger.lines('warn')).toEqual([]);
    await ref.close();
  });
});

describe('log volume: a held lock is a normal outcome', () => {
  let logger: RecordingLogger;
  beforeEach(() => {
    logger = new RecordingLogger();
  });
  afterEach(() => Logger.overrideLogger(true));

  @Injectable()
  class Job {
    @Locked('job:77', { onHeld: 'skip' })
    skip() {}

    @Locked('job:78')
    refuse() {}
  }

  test('500 skipped and 500 refused calls log one line each, then one summary each on close; no warnings', async () => {
    const memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: memory })],
      providers: [Job],
    })
      .setLogger(logger)
      .compile();
    const job = ref.get(Job);
    const releases = [await memory.hold('job:77'), await memory.hold('job:78')];
    for (let i = 0; i < 500; i++) {
      await job.skip();
      await expect(job.refuse()).rejects.toBeInstanceOf(LockAcquireError);
    }
    const about77 = () => logger.entries.filter(([, m]) => m.includes('"job:77"'));
    const about78 = () => logger.entries.filter(([, m]) => m.includes('"job:78"'));
    expect(about77()).toHaveLength(1);
    expect(about78()).toHaveLength(1);
    expect(logger.lines('warn')).toEqual([]);
    expect(logger.lines('error')).toEqual([]);
    for (const release of releases) await release();
    await ref.close();
    expect(logger.lines('debug', 'skipped 499 more calls of lock "job:77" in the last 60 s')).toHaveLength(1);
    expect(logger.lines('debug', 'refused 499 more calls of lock "job:78" in the last 60 s')).toHaveLength(1);
  });
});

describe('InMemoryLockProvider.hold() takes the lock name', () => {
  @Controller('reports')
  class ReportsController {
    @Post()
    @Locked('reports')
    build() {
      return { built: true };
    }
  }

  test("with the module's keyPrefix applied, also through overrideProvider(LockProvider)", async () => {
    @Module({
      imports: [LockModule.forRoot({ keyPrefix: 'app1:' })],
      controllers: [ReportsController],
      providers: [{ provide: APP_FILTER, useClass: LockExceptionFilter }],
    })
    class AppModule {}
    const memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(LockProvider)
      .useValue(memory)
      .compile();
    const app: INestApplication = ref.createNestApplication({ logger: false });
    await app.init();
    try {
      const release = await memory.hold('reports');
      expect(memory.isHeld('reports')).toBe(true);
      await request(app.getHttpServer()).post('/reports').expect(409);
      await release();
      await request(app.getHttpServer()).post('/reports').expect(201);
      expect(memory.keyPrefix).toBe('app1:');
    } finally {
      await app.close();
    }
  });
});
