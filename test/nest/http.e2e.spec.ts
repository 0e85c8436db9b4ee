import 'reflect-metadata';
import {
  Controller,
  Get,
  HttpCode,
  Injectable,
  Param,
  ParseIntPipe,
  Post,
  Sse,
  UseFilters,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { Observable, interval, map, take } from 'rxjs';
import {
  InMemoryLockProvider,
  LockExceptionFilter,
  LockModule,
  LockProvider,
  LockStoreError,
  Locked,
  currentLock,
  type LockAcquireRequest,
} from '../../lib/index.js';
import { createHttpApp, httpAdapters } from '../support/http-adapters.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { sleep } from '../support/sleep.js';

@Injectable()
class Counter {
  inside = 0;
  maxInside = 0;
  entered = 0;
}

@Controller()
class PayoutsController {
  constructor(private readonly counter: Counter) {}

  @Post('payouts')
  @Locked('payouts')
  async run() {
    this.counter.entered++;
    this.counter.inside++;
    this.counter.maxInside = Math.max(this.counter.maxInside, this.counter.inside);
    await sleep(1_000);
    this.counter.inside--;
    return { paid: true, fencingToken: currentLock()!.fencingToken };
  }

  @Post('accounts/:id/recompute')
  @HttpCode(200)
  @Locked((id: string) => `account:${id}`)
  async recompute(@Param('id') id: string) {
    await sleep(300);
    return { id, lock: currentLock()!.name };
  }

  @Get('numbers/:n')
  @Locked((n: unknown) => `number:${typeof n}:${String(n)}`)
  async piped(@Param('n', ParseIntPipe) n: number) {
    return { n, lock: currentLock()!.name };
  }

  @Post('queue')
  @HttpCode(200)
  @Locked('queue', { onHeld: 'wait', waitTimeout: 10_000 })
  async queue() {
    await sleep(50);
    return { token: currentLock()!.fencingToken };
  }

  @Sse('events')
  @Locked('events')
  events(): Observable<{ data: number }> {
    return interval(100).pipe(
      take(3),
      map((i) => ({ data: i })),
    );
  }

  @Get('stream')
  @Locked('stream')
  stream(): Observable<number> {
    return interval(150).pipe(take(2));
  }
}

@Controller('filtered')
@UseFilters(new LockExceptionFilter())
class FilteredController {
  @Post('payouts')
  @Locked('payouts')
  async run() {
    await sleep(1_000);
    return { paid: true };
  }
}

@Controller('by-class')
@UseFilters(LockExceptionFilter)
class ByClassController {
  @Post('payouts')
  @Locked('payouts')
  async run() {
    await sleep(1_000);
    return { paid: true };
  }
}

@Controller('detailed')
@UseFilters(new LockExceptionFilter({ detailedStoreErrors: true }))
class DetailedController {
  @Post('payouts')
  @Locked('payouts')
  run() {
    return { paid: true };
  }
}

/** A controller with a filter of its own (a filter logs a cause once a minute: each app gets a fresh one). */
function downController() {
  @Controller('down')
  @UseFilters(new LockExceptionFilter())
  class DownController {
    @Post('payouts')
    @Locked('payouts')
    run() {
      return { paid: true };
    }
  }
  return DownController;
}

/** What a real store says when it is down: its address and the key. */
const DOWN_CAUSE = 'Redis at 10.1.2.3:6399 refused the connection (ECONNREFUSED)';

class DownProvider extends LockProvider {
  readonly kind = 'down';
  async acquire(r: LockAcquireRequest): Promise<null> {
    throw new LockStoreError('acquire', `${DOWN_CAUSE} (key "${r.key}")`, { lockName: r.key.replace(/^.*:/, '') });
  }
  async extend(): Promise<boolean> {
    return false;
  }
  async release(): Promise<boolean> {
    return false;
  }
  async ping(): Promise<number> {
    throw new LockStoreError('ping', 'connect ECONNREFUSED');
  }
  async close() {}
}

describe.each(httpAdapters)('@Locked over HTTP (%s)', (_name, adapter) => {
  let app: INestApplication;
  let memory: InMemoryLockProvider;
  let counter: Counter;

  beforeAll(async () => {
    memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: memory })],
      controllers: [PayoutsController, FilteredController, ByClassController],
      providers: [Counter],
    }).compile();
    app = await createHttpApp(ref, adapter());
    counter = app.get(Counter);
  });
  afterAll(() => app.close());

  test('concurrent requests: exactly one enters, the others get 500 through Nest', async () => {
    const server = app.getHttpServer();
    const responses = await Promise.all(Array.from({ length: 6 }, () => request(server).post('/payouts')));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 500, 500, 500, 500, 500]);
    expect(counter.entered).toBe(1);
    expect(counter.maxInside).toBe(1);
    expect(memory.isHeld('payouts')).toBe(false);
    // After the holder finished, the next request enters.
    await request(server).post('/payouts').expect(201);
  });

  test('with LockExceptionFilter a held lock answers 409 with a JSON body naming the lock', async () => {
    const server = app.getHttpServer();
    const responses = await Promise.all(Array.from({ length: 4 }, () => request(server).post('/filtered/payouts')));
    const conflicts = responses.filter((r) => r.status === 409);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(conflicts).toHaveLength(3);
    expect(conflicts[0].body).toMatchObject({ statusCode: 409, error: 'Conflict', lock: 'payouts' });
    expect(conflicts[0].body.message).toContain('"payouts" is held');
  });

  test('a lock held by "another instance" answers 409 through the filter (instance or class form)', async () => {
    const release = await memory.hold('payouts');
    try {
      await request(app.getHttpServer()).post('/filtered/payouts').expect(409);
      await request(app.getHttpServer()).post('/by-class/payouts').expect(409);
    } finally {
      await release();
    }
  });

  test('per-resource names: the same id conflicts, another id does not; the name uses the piped parameter', async () => {
    const server = app.getHttpServer();
    const [a, b, c] = await Promise.all([
      request(server).post('/accounts/1/recompute'),
      request(server).post('/accounts/1/recompute'),
      request(server).post('/accounts/2/recompute'),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 500]);
    expect(c.status).toBe(200);
    expect(c.body).toEqual({ id: '2', lock: 'account:2' });
  });

  test('a name function receives the arguments after pipes', async () => {
    const res = await request(app.getHttpServer()).get('/numbers/0042').expect(200);
    expect(res.body).toEqual({ n: 42, lock: 'number:number:42' });
  });

  test("onHeld 'wait': concurrent requests all succeed, in turn, with increasing fencing tokens", async () => {
    const server = app.getHttpServer();
    const responses = await Promise.all(Array.from({ length: 5 }, () => request(server).post('/queue')));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const tokens = responses.map((r) => r.body.token as number);
    expect(new Set(tokens).size).toBe(5);
  });

  test('an SSE route keeps its lock until the stream completes', async () => {
    const server = app.getHttpServer();
    const sse = request(server)
      .get('/events')
      .buffer(true)
      .parse((res, cb) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => cb(null, text));
      });
    const pending = sse.then((r) => r);
    await sleep(150);
    expect(memory.isHeld('events')).toBe(true);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(String(response.body)).toContain('data: 2');
    await sleep(20);
    expect(memory.isHeld('events')).toBe(false);
  });

  test('an Observable route holds the lock while streaming, and a second request meanwhile gets 500', async () => {
    const server = app.getHttpServer();
    const first = request(server)
      .get('/stream')
      .then((r) => r);
    await sleep(100);
    const second = await request(server).get('/stream');
    expect(second.status).toBe(500);
    expect((await first).status).toBe(200);
  });
});

describe.each(httpAdapters)('a store that is down (%s)', (_name, adapter) => {
  let app: INestApplication;
  beforeAll(async () => {
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: new DownProvider() })],
      controllers: [PayoutsController, downController(), DetailedController],
      providers: [Counter],
    }).compile();
    app = await createHttpApp(ref, adapter());
    app.useLogger(logs);
  });
  afterAll(() => app.close());
  const logs = new RecordingLogger();

  test('answers 503 through the filter, naming the lock but not the store; the cause is logged once', async () => {
    const [res, again] = await Promise.all(
      [1, 2].map(() => request(app.getHttpServer()).post('/down/payouts').expect(503)),
    );
    expect(res.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'The lock store is unavailable, so lock "payouts" could not be taken. Retry later.',
      lock: 'payouts',
    });
    expect(again.body).toEqual(res.body);
    expect(JSON.stringify(res.body)).not.toMatch(/10\.1\.2\.3|6399|ECONNREFUSED|locks:/);
    // The cause is for the server's log: once for both calls (the repeat is counted for the minute's summary).
    const logged = logs.lines('warn', DOWN_CAUSE);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(
      /^Answered 503: Lock store failed during acquire of lock "payouts": Redis at 10\.1\.2\.3:6399/,
    );
  });

  test('with detailedStoreErrors the body carries the full cause (internal services)', async () => {
    const res = await request(app.getHttpServer()).post('/detailed/payouts').expect(503);
    expect(res.body).toMatchObject({ statusCode: 503, lock: 'payouts' });
    expect(res.body.message).toContain(`Lock store failed during acquire of lock "payouts": ${DOWN_CAUSE}`);
  });

  test('answers 500 without the filter', async () => {
    await request(app.getHttpServer()).post('/payouts').expect(500);
  });
});
