/**
 * The lock page's routes on both HTTP platforms: HTML with a strict CSP, the
 * JSON the page reads, the guard, and what the JSON must never contain.
 */
import 'reflect-metadata';
import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { InMemoryLockProvider, LockModule, LockOptionsError, LockService, LockStoreError } from '../../lib/index.js';
import { LockDashboardModule, type LockDashboardData } from '../../lib/dashboard/index.js';
import { createHttpApp, httpAdapters } from '../support/http-adapters.js';

@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (
      context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-admin'] === 'yes'
    );
  }
}

/** A store whose releases fail with a message that names a Redis URL with a password. */
class LeakyStore extends InMemoryLockProvider {
  override release(): never {
    throw new LockStoreError('release', 'connect ECONNREFUSED redis://:hunter2@10.0.0.5:6379');
  }
}

describe.each(httpAdapters)('the lock page on %s', (_platform, adapter) => {
  let app: INestApplication;
  let store: LeakyStore;

  beforeAll(async () => {
    store = new LeakyStore();
    const ref = await Test.createTestingModule({
      imports: [
        LockModule.forRoot({ provider: store }),
        LockDashboardModule.register({ path: 'locks', guard: HeaderGuard }),
      ],
    }).compile();
    app = await createHttpApp(ref, adapter());
  });
  afterAll(async () => {
    await app?.close();
  });

  test('serves the HTML page with a CSP that allows only its own script and style', async () => {
    const res = await request(app.getHttpServer()).get('/locks').set('x-admin', 'yes').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toMatch(
      /default-src 'none'; style-src 'sha256-[^']+'; script-src 'sha256-[^']+'; connect-src 'self'/,
    );
    expect(res.text).toContain('<table>');
  });

  test('the JSON lists held locks, counts and recent events; no owner token, no credentials', async () => {
    const locks = app.get(LockService);
    const held = await locks.acquire('job:1', { label: 'job' });
    await locks.withLock('job:2', () => undefined).catch(() => undefined); // its release fails: a store error
    const res = await request(app.getHttpServer()).get('/locks/data').set('x-admin', 'yes').expect(200);
    const data = res.body as LockDashboardData;
    expect(data.store).toBe('memory');
    expect(data.locks.map((l) => l.name)).toContain('job:1');
    expect(data.locks.find((l) => l.name === 'job:1')).toMatchObject({
      mine: true,
      label: 'job',
      fencingToken: held.fencingToken,
      waiters: 0,
    });
    expect(data.counts.find((c) => c.name === 'job:2')).toMatchObject({ acquired: 1, storeErrors: 1 });
    const storeError = data.recent.find((e) => e.type === 'store-error')!;
    expect(storeError.detail).toContain('release: ');
    expect(res.text).not.toContain('hunter2');
    expect(res.text).not.toContain((held as unknown as { owner: string }).owner);
    held.release().catch(() => undefined);
  });

  test('the guard refuses both routes', async () => {
    await request(app.getHttpServer()).get('/locks').expect(403);
    await request(app.getHttpServer()).get('/locks/data').expect(403);
  });
});

test('register() checks its options', () => {
  expect(() => LockDashboardModule.register({ path: '/' })).toThrow(LockOptionsError);
  expect(() => LockDashboardModule.register({ refreshMs: 0 })).toThrow(/refreshMs must be an integer/);
});
