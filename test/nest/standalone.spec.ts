import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InMemoryLockProvider, LockModule, LockService } from '../../lib/index.js';
import { compiledScript } from '../support/paths.js';

/** The sample's standalone script, compiled. */
const sampleScript = () => compiledScript(new URL('../../sample/standalone/rebuild-report.js', import.meta.url));

describe('standalone use: createApplicationContext + withLock + close', () => {
  test('the lock is released and the context closes; later calls are refused', async () => {
    const memory = new InMemoryLockProvider();
    @Module({ imports: [LockModule.forRoot({ provider: memory })] })
    class ScriptModule {}
    const app = await NestFactory.createApplicationContext(ScriptModule, { logger: false });
    const locks = app.get(LockService);
    const held = await locks.acquire('left-open'); // forgotten by the script: close() must release it
    expect(await locks.withLock('job', async (lock) => lock.fencingToken)).toBeGreaterThan(0);
    expect(memory.isHeld('job')).toBe(false);
    expect(memory.isHeld('left-open')).toBe(true);
    await app.close();
    expect(memory.isHeld('left-open')).toBe(false);
    expect(held.held).toBe(false);
    await expect(locks.acquire('after')).rejects.toThrow(/closed/);
  });

  test('the sample script runs under the lock and exits on its own (no handle left open)', () => {
    const script = sampleScript();
    const env = { ...process.env };
    delete env.REDIS_URL;
    delete env.NODE_OPTIONS;
    const run = spawnSync(process.execPath, [script], { env, encoding: 'utf8', timeout: 20_000 });
    expect(run.error).toBeUndefined();
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/rebuilt under fencing token \d+/);
    expect(run.status).toBe(0);
  });

  test('with REDIS_URL the script locks in Redis, releases, closes its connections and exits on its own', async () => {
    const { Redis } = await import('ioredis');
    const script = sampleScript();
    const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: 'redis://127.0.0.1:6379' };
    delete env.NODE_OPTIONS;
    const run = spawnSync(process.execPath, [script], { env, encoding: 'utf8', timeout: 20_000 });
    expect(run.error).toBeUndefined(); // a connection left open would keep the process alive past the timeout
    expect(run.stdout).toMatch(/rebuilt under fencing token \d+/);
    expect(run.status).toBe(0);
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      expect(await redis.exists('{lock:reports:rebuild}')).toBe(0);
    } finally {
      await redis.quit();
    }
  });
});
