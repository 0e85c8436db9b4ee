import 'reflect-metadata';
import { Controller, Module, Post, UseFilters, type INestApplication } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import request from 'supertest';
import {
  InMemoryLockProvider,
  LockError,
  LockExceptionFilter,
  LockModule,
  LockProvider,
  LockService,
  Locked,
} from '../../lib/index.js';

@Controller('reports')
@UseFilters(new LockExceptionFilter())
class ReportsController {
  runs = 0;
  @Post()
  @Locked('reports')
  build() {
    return { runs: ++this.runs };
  }
}

@Module({
  // Production config: a Redis nobody listens on. The override must keep the app from ever connecting.
  imports: [LockModule.forRoot({ redis: 'redis://127.0.0.1:1', commandTimeout: 200 })],
  controllers: [ReportsController],
})
class AppModule {}

describe('overrideProvider(LockProvider) in a test module', () => {
  let app: INestApplication;
  const memory = new InMemoryLockProvider();

  beforeAll(async () => {
    const ref = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(LockProvider)
      .useValue(memory)
      .compile();
    app = ref.createNestApplication();
    await app.init();
  });
  afterAll(() => app.close());

  test('the app boots on the replacement, without building or connecting the Redis store', () => {
    expect(app.get(LockProvider)).toBe(memory);
    expect(app.get(LockService).provider).toBe(memory);
  });

  test('a route answers 409 while "another instance" holds its lock, and runs once it is free', async () => {
    const release = await memory.hold('reports');
    await request(app.getHttpServer()).post('/reports').expect(409);
    expect(memory.isHeld('reports')).toBe(true);
    await release();
    const res = await request(app.getHttpServer()).post('/reports').expect(201);
    expect(res.body).toEqual({ runs: 1 });
  });

  test('hold() on a key already held fails with a LockError that says what to do', async () => {
    const release = await memory.hold('twice');
    await expect(memory.hold('twice')).rejects.toThrow(LockError);
    await expect(memory.hold('twice')).rejects.toThrow(/already held.*reset\(\)/);
    await release();
    await (
      await memory.hold('twice')
    )();
  });

  test('closing the app does not close a provider passed in by the test', async () => {
    const release = await memory.hold('other');
    expect(memory.isHeld('other')).toBe(true);
    await release();
  });
});

describe('module-level checks', () => {
  test('forRoot with options that are not an object fails with LockOptionsError', () => {
    expect(() => LockModule.forRoot(null as unknown as object)).toThrow(/must be an object, got null/);
    expect(() => LockModule.forRoot('redis://x' as unknown as object)).toThrow(/must be an object/);
    expect(() => LockModule.forRoot({ isGlobal: 'yes' as unknown as boolean })).toThrow(
      /isGlobal must be true or false/,
    );
  });

  test('with NODE_ENV=production the in-memory provider warns once at boot that locks do not span instances', async () => {
    const { Logger } = await import('@nestjs/common');
    const warnings: string[] = [];
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    const logger = { log() {}, error() {}, debug() {}, verbose() {}, warn: (m: unknown) => warnings.push(String(m)) };
    Logger.overrideLogger(logger);
    try {
      for (let i = 0; i < 2; i++) {
        const ref = await Test.createTestingModule({ imports: [LockModule.forRoot()] })
          .setLogger(logger)
          .compile();
        await ref.init();
        await ref.close();
      }
    } finally {
      process.env.NODE_ENV = previous;
      Logger.overrideLogger(true);
    }
    const inMemory = warnings.filter((w) => w.includes('in-memory provider'));
    expect(inMemory).toHaveLength(1);
    expect(inMemory[0]).toContain('not other instances');
  });
});

describe('the module closes on shutdown the store it built, never one given or put in its place', () => {
  /** Whether a lock held in `store` by "another instance" is still there after the app closes (a closed in-memory store forgets it). */
  async function keptAfterClose(compile: () => Promise<TestingModule>, store?: InMemoryLockProvider): Promise<boolean> {
    const ref = await compile();
    await ref.init();
    const used = ref.get(LockProvider) as InMemoryLockProvider;
    if (store) expect(used).toBe(store);
    const release = await used.hold('kept');
    await ref.close();
    const kept = used.isHeld('kept');
    await release();
    return kept;
  }

  test('a store built from the options (the in-memory default) is closed', async () => {
    expect(await keptAfterClose(() => Test.createTestingModule({ imports: [LockModule.forRoot()] }).compile())).toBe(
      false,
    );
  });

  test("the options' own provider stays open", async () => {
    const store = new InMemoryLockProvider();
    expect(
      await keptAfterClose(
        () => Test.createTestingModule({ imports: [LockModule.forRoot({ provider: store })] }).compile(),
        store,
      ),
    ).toBe(true);
  });

  test("a test module's replacement of LockProvider stays open", async () => {
    const store = new InMemoryLockProvider();
    const compile = () =>
      Test.createTestingModule({ imports: [LockModule.forRoot()] })
        .overrideProvider(LockProvider)
        .useValue(store)
        .compile();
    expect(await keptAfterClose(compile, store)).toBe(true);
  });
});
