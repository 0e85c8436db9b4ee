import 'reflect-metadata';
import { Controller, Get, HttpCode, Injectable, Post, SetMetadata, UseGuards, type CanActivate } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Cron, Interval, SchedulerRegistry, ScheduleModule, Timeout } from '@nestjs/schedule';
import { OnEvent, EventEmitterModule } from '@nestjs/event-emitter';
import { Observable, firstValueFrom, Subject, toArray, lastValueFrom } from 'rxjs';
import {
  InMemoryLockProvider,
  LockAcquireError,
  LockModule,
  LockOptionsError,
  LockProvider,
  LockReentryError,
  LockService,
  Locked,
  currentLock,
  MAX_LOCK_NAME_LENGTH,
} from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

const PATH = 'path';
const METHOD = 'method';
const HTTP_CODE = '__httpCode__';
const GUARDS = '__guards__';

class AllowGuard implements CanActivate {
  canActivate() {
    return true;
  }
}

@Injectable()
class Jobs {
  calls: unknown[] = [];
  gate = new Subject<void>();

  @Locked('jobs.run')
  async run(x: number) {
    this.calls.push({ self: this, x });
    await sleep(50);
    return x * 2;
  }

  @Locked()
  defaultName() {
    return currentLock()?.name;
  }

  @Locked('jobs.fail')
  async fail() {
    throw new RangeError('bad input');
  }

  @Locked('jobs.syncThrow')
  syncThrow(): never {
    throw new TypeError('sync');
  }

  @Locked((id: string, _other: number) => `account:${id}`)
  async perAccount(_id: string, _other: number) {
    await sleep(50);
    return currentLock()!.name;
  }

  @Locked((..._args: unknown[]) => '')
  emptyName() {
    this.calls.push('emptyName ran');
  }

  @Locked(() => {
    throw new Error('no id');
  })
  throwingName() {
    this.calls.push('throwingName ran');
  }

  @Locked(() => 42 as unknown as string)
  numberName() {
    this.calls.push('numberName ran');
  }

  @Locked((id: string) => `job:${id}`)
  byId(_id: string) {
    this.calls.push('byId ran');
  }

  @Locked('jobs.skip', { onHeld: 'skip' })
  async skip() {
    await sleep(100);
    return 'ran';
  }

  @Locked('jobs.wait', { onHeld: 'wait', waitTimeout: 5_000 })
  async wait(i: number) {
    await sleep(30);
    return i;
  }

  @Locked('jobs.outer')
  async outer(reentrant: boolean) {
    return reentrant ? this.innerReentrant() : this.innerPlain();
  }

  @Locked('jobs.outer')
  async innerPlain() {
    return 'inner';
  }

  @Locked('jobs.outer', { reentrant: true })
  async innerReentrant() {
    return 'inner-reentrant';
  }

  @Locked('jobs.stream')
  stream(): Observable<number> {
    return new Observable<number>((sub) => {
      const sub2 = this.gate.subscribe(() => {
        sub.next(1);
        sub.complete();
      });
      return () => sub2.unsubscribe();
    });
  }
}

// Metadata in both orders, for decorators of @nestjs/common, schedule and event-emitter.
@Controller('meta')
class MetaController {
  @Get('above')
  @HttpCode(202)
  @UseGuards(AllowGuard)
  @SetMetadata('custom', 'above')
  @Locked('meta.above')
  above() {
    return 'above';
  }

  @Locked('meta.below')
  @Post('below')
  @HttpCode(203)
  @UseGuards(AllowGuard)
  @SetMetadata('custom', 'below')
  below() {
    return 'below';
  }
}

@Injectable()
class Scheduled {
  ticks = 0;
  events: string[] = [];

  @Cron('0 0 1 1 *', { name: 'cron-above' })
  @Locked('sched.cronAbove')
  cronAbove() {
    this.ticks++;
  }

  @Locked('sched.cronBelow')
  @Cron('0 0 1 1 *', { name: 'cron-below' })
  cronBelow() {
    this.ticks++;
  }

  @Locked('sched.interval')
  @Interval('interval-below', 60_000)
  interval() {
    this.ticks++;
  }

  @Timeout('timeout-above', 60_000)
  @Locked('sched.timeout')
  timeout() {
    this.ticks++;
  }

  @OnEvent('order.created')
  @Locked('events.above')
  onAbove(payload: string) {
    this.events.push(`above:${payload}`);
  }

  @Locked('events.below')
  @OnEvent('order.created')
  onBelow(payload: string) {
    this.events.push(`below:${payload}`);
  }
}

describe('@Locked on providers', () => {
  let jobs: Jobs;
  let memory: InMemoryLockProvider;

  beforeAll(async () => {
    memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: memory })],
      providers: [Jobs],
    }).compile();
    jobs = ref.get(Jobs);
  });

  test('runs with this = the instance, passes the return value, releases after', async () => {
    expect(await jobs.run(21)).toBe(42);
    expect((jobs.calls[0] as { self: unknown }).self).toBe(jobs);
    expect(memory.isHeld('jobs.run')).toBe(false);
  });

  test('keeps the function name', () => {
    expect(jobs.run.name).toBe('run');
    expect(Jobs.prototype.perAccount.name).toBe('perAccount');
  });

  test('a second concurrent call gets LockAcquireError; exactly one runs', async () => {
    jobs.calls = [];
    const results = await Promise.allSettled([jobs.run(1), jobs.run(2), jobs.run(3)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(2);
    for (const r of rejected) {
      expect(r.reason).toBeInstanceOf(LockAcquireError);
      expect(r.reason.lockName).toBe('jobs.run');
    }
    expect(jobs.calls).toHaveLength(1);
  });

  test('the default name is ClassName.methodName', async () => {
    expect(await jobs.defaultName()).toBe('Jobs.defaultName');
  });

  test('a thrown error passes through unchanged and the lock is released (async and sync methods)', async () => {
    await expect(jobs.fail()).rejects.toThrow(RangeError);
    expect(memory.isHeld('jobs.fail')).toBe(false);
    await expect(jobs.syncThrow()).rejects.toThrow(TypeError);
    expect(memory.isHeld('jobs.syncThrow')).toBe(false);
  });

  test('a name function receives the arguments; different names never block each other', async () => {
    const [a, b] = await Promise.all([jobs.perAccount('1', 0), jobs.perAccount('2', 0)]);
    expect([a, b]).toEqual(['account:1', 'account:2']);
    const same = await Promise.allSettled([jobs.perAccount('1', 0), jobs.perAccount('1', 0)]);
    expect(same.filter((r) => r.status === 'rejected')).toHaveLength(1);
  });

  test('a name function that returns "" or a non-string, or throws, fails with LockOptionsError and the method never runs', async () => {
    jobs.calls = [];
    await expect(jobs.emptyName()).rejects.toThrow(LockOptionsError);
    await expect(jobs.throwingName()).rejects.toThrow(/name function threw: no id/);
    await expect(jobs.numberName()).rejects.toThrow(/got 42/);
    expect(jobs.calls).toEqual([]);
  });

  test('a name function whose name breaks the name rules fails with LockOptionsError naming the rule; the method never runs', async () => {
    jobs.calls = [];
    const where = /^@Locked\(\) on Jobs\.byId \(name function\): /;
    await expect(jobs.byId('a\u0000b')).rejects.toThrow(LockOptionsError);
    await expect(jobs.byId('a\u0000b')).rejects.toThrow(where);
    await expect(jobs.byId('a\u0000b')).rejects.toThrow(
      /the lock name "job:a\\u0000b" holds a control character U\+0000 at index 5/,
    );
    await expect(jobs.byId('\ud800')).rejects.toThrow(/holds a lone surrogate U\+D800/);
    await expect(jobs.byId('x'.repeat(MAX_LOCK_NAME_LENGTH))).rejects.toThrow(
      /a lock name must be at most 512 characters .*\(516 characters\)/,
    );
    expect(jobs.calls).toEqual([]);
    expect(await jobs.byId('x'.repeat(MAX_LOCK_NAME_LENGTH - 4))).toBeUndefined();
    expect(jobs.calls).toEqual(['byId ran']);
  });

  test("onHeld 'skip' returns undefined without running", async () => {
    const [a, b] = await Promise.all([jobs.skip(), jobs.skip()]);
    expect([a, b].sort()).toEqual(['ran', undefined].sort());
  });

  test("onHeld 'wait' runs every caller, one at a time", async () => {
    expect(await Promise.all([jobs.wait(1), jobs.wait(2), jobs.wait(3)])).toEqual([1, 2, 3]);
  });

  test('nesting the same name fails at once; reentrant: true runs under the outer lock', async () => {
    await expect(jobs.outer(false)).rejects.toBeInstanceOf(LockReentryError);
    expect(await jobs.outer(true)).toBe('inner-reentrant');
    expect(memory.isHeld('jobs.outer')).toBe(false);
  });

  test('an Observable keeps the lock until it completes', async () => {
    const stream = jobs.stream();
    expect(stream).toBeInstanceOf(Observable);
    const value = firstValueFrom(stream.pipe(toArray()));
    await sleep(20);
    expect(memory.isHeld('jobs.stream')).toBe(true);
    jobs.gate.next();
    expect(await value).toEqual([1]);
    await sleep(10);
    expect(memory.isHeld('jobs.stream')).toBe(false);
  });

  test('an Observable releases the lock when unsubscribed, and a second subscriber meanwhile gets LockAcquireError', async () => {
    const sub = jobs.stream().subscribe();
    await sleep(20);
    expect(memory.isHeld('jobs.stream')).toBe(true);
    await expect(lastValueFrom(jobs.stream())).rejects.toBeInstanceOf(LockAcquireError);
    sub.unsubscribe();
    await sleep(10);
    expect(memory.isHeld('jobs.stream')).toBe(false);
  });

  test('calling a locked method on an instance Nest did not create fails with a clear LockOptionsError', async () => {
    await expect(new Jobs().run(1)).rejects.toThrow(/no LockService on this instance/);
  });
});

describe('@Locked keeps other decorators working in either order', () => {
  test('@Get/@Post/@HttpCode/@UseGuards/SetMetadata metadata on the route handler', () => {
    const reflector = new Reflector();
    const above = MetaController.prototype.above;
    const below = MetaController.prototype.below;
    expect(Reflect.getMetadata(PATH, above)).toBe('above');
    expect(Reflect.getMetadata(METHOD, above)).toBe(0); // GET
    expect(Reflect.getMetadata(HTTP_CODE, above)).toBe(202);
    expect(Reflect.getMetadata(GUARDS, above)).toEqual([AllowGuard]);
    expect(reflector.get('custom', above)).toBe('above');
    expect(Reflect.getMetadata(PATH, below)).toBe('below');
    expect(Reflect.getMetadata(METHOD, below)).toBe(1); // POST
    expect(Reflect.getMetadata(HTTP_CODE, below)).toBe(203);
    expect(Reflect.getMetadata(GUARDS, below)).toEqual([AllowGuard]);
    expect(reflector.get('custom', below)).toBe('below');
  });

  test('@Cron, @Interval and @Timeout register the locked method in both orders; @OnEvent listeners fire in both orders', async () => {
    const memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: memory }), ScheduleModule.forRoot(), EventEmitterModule.forRoot()],
      providers: [Scheduled],
    }).compile();
    const app = ref.createNestApplication();
    await app.init();
    try {
      const registry = app.get(SchedulerRegistry);
      expect(registry.getCronJobs().has('cron-above')).toBe(true);
      expect(registry.getCronJobs().has('cron-below')).toBe(true);
      expect(registry.getIntervals()).toContain('interval-below');
      expect(registry.getTimeouts()).toContain('timeout-above');
      const s = app.get(Scheduled);
      // What the scheduler calls is the locked method: hold its lock and fire the job.
      const release = await memory.hold('sched.cronAbove');
      await registry.getCronJob('cron-above').fireOnTick();
      await registry.getCronJob('cron-below').fireOnTick();
      await sleep(50);
      expect(s.ticks).toBe(1); // cron-above skipped (held), cron-below ran
      await release();
      const emitter = app.get((await import('@nestjs/event-emitter')).EventEmitter2);
      await emitter.emitAsync('order.created', 'o1');
      expect(s.events.sort()).toEqual(['above:o1', 'below:o1']);
    } finally {
      await app.close();
    }
  });
});

describe('@Locked bad input fails at decoration time', () => {
  const define = (decorate: () => void) => () => decorate();
  test.each([
    [
      'an empty name',
      () => {
        class A {
          @Locked('') m() {}
        }
        return A;
      },
      /non-empty string, got ""/,
    ],
    [
      'a number name',
      () => {
        class A {
          @Locked(5 as unknown as string) m() {}
        }
        return A;
      },
      /pass a name/,
    ],
    [
      'null',
      () => {
        class A {
          @Locked(null as unknown as string) m() {}
        }
        return A;
      },
      /pass a name/,
    ],
    [
      'a negative ttl',
      () => {
        class A {
          @Locked('a', { ttl: -1 }) m() {}
        }
        return A;
      },
      /A\.m: ttl must be/,
    ],
    [
      'an infinite waitTimeout',
      () => {
        class A {
          @Locked('a', { onHeld: 'wait', waitTimeout: Infinity }) m() {}
        }
        return A;
      },
      /waitTimeout/,
    ],
    [
      'a ttl over 2^31 − 1 ms',
      () => {
        class A {
          @Locked('a', { ttl: 2 ** 31 }) m() {}
        }
        return A;
      },
      /A\.m: ttl must be a finite number of milliseconds > 0 and at most 2147483647 \(2\^31 − 1 ms, about 24\.8 days\), got 2147483648\./,
    ],
    [
      'a maxHold of 1e20',
      () => {
        class A {
          @Locked('a', { maxHold: 1e20 }) m() {}
        }
        return A;
      },
      /A\.m: maxHold must be .* at most 2147483647/,
    ],
    [
      'a name with NUL',
      () => {
        class A {
          @Locked('a\u0000') m() {}
        }
        return A;
      },
      /the lock name "a\\u0000" holds a control character U\+0000/,
    ],
    [
      'a name over MAX_LOCK_NAME_LENGTH',
      () => {
        class A {
          @Locked({ name: 'n'.repeat(513) }) m() {}
        }
        return A;
      },
      /a lock name must be at most 512 characters/,
    ],
    [
      'an unknown onHeld',
      () => {
        class A {
          @Locked({ name: 'a', onHeld: 'later' as 'wait' }) m() {}
        }
        return A;
      },
      /onHeld must be one of/,
    ],
    [
      'an empty name in options',
      () => {
        class A {
          @Locked({ name: '' }) m() {}
        }
        return A;
      },
      /non-empty/,
    ],
    [
      'a getter',
      () => {
        class A {
          @(Locked('a') as unknown as MethodDecorator)
          get value() {
            return 1;
          }
        }
        return A;
      },
      /decorates methods only/,
    ],
    [
      'a static method',
      () => {
        class A {
          @Locked('a') static m() {}
        }
        return A;
      },
      /static methods/,
    ],
  ])('%s', (_label, decorate, message) => {
    let error: unknown;
    try {
      define(decorate as () => void)();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LockOptionsError);
    expect(String((error as Error).message)).toMatch(message);
  });

  test('a property (not a method) is refused', () => {
    expect(() => {
      const decorate = Locked('a') as unknown as (t: object, k: string, d?: PropertyDescriptor) => void;
      class A {
        prop = 1;
      }
      decorate(A.prototype, 'prop', undefined);
    }).toThrow(/decorates methods only/);
  });
});

describe('LockModule options are validated at forRoot and at boot for forRootAsync', () => {
  test('forRoot with a bad option throws LockOptionsError naming it', () => {
    expect(() => LockModule.forRoot({ ttl: -5 })).toThrow(/ttl must be/);
    expect(() => LockModule.forRoot({ provider: {} as LockProvider })).toThrow(/provider must be an instance/);
    expect(() => LockModule.forRoot({ unknown: 1 } as object)).toThrow(/unknown option "unknown"/);
  });

  test('forRootAsync results go through the same check', async () => {
    const build = Test.createTestingModule({
      imports: [LockModule.forRootAsync({ useFactory: () => ({ onHeld: 'sometimes' as 'wait' }) })],
    }).compile();
    await expect(build).rejects.toThrow(/onHeld must be one of/);
  });

  test('forRootAsync with a factory and inject works', async () => {
    const memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRootAsync({ useFactory: () => ({ provider: memory, keyPrefix: 'async:' }) })],
    }).compile();
    const svc = ref.get(LockService);
    await svc.withLock('x', () => expect(memory.isHeld('x')).toBe(true));
    expect(memory.keyPrefix).toBe('async:');
    expect(ref.get(LockProvider)).toBe(memory);
  });
});
