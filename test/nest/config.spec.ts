import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import {
  InMemoryLockProvider,
  LockModule,
  LockOptionsError,
  LockProvider,
  LockService,
  type LockModuleOptions,
  type LockOptionsFactory,
} from '../../lib/index.js';

const config = () => ({ LOCK_PREFIX: 'cfg:', LOCK_TTL: 12_345 });

@Injectable()
class LockConfig implements LockOptionsFactory {
  constructor(private readonly config: ConfigService) {}
  createLockOptions(): LockModuleOptions {
    return {
      keyPrefix: this.config.getOrThrow<string>('LOCK_PREFIX'),
      ttl: this.config.getOrThrow<number>('LOCK_TTL'),
    };
  }
}

@Module({ imports: [ConfigModule], providers: [LockConfig], exports: [LockConfig] })
class LockConfigModule {}

async function prefixOf(svc: LockService): Promise<string> {
  const handle = await svc.acquire('probe');
  await handle.release();
  return handle.key.slice(0, -'probe'.length);
}

/** The lease a lock of `svc` gets by default (the module's `ttl`), as the store reports it. */
async function defaultLeaseOf(svc: LockService): Promise<number> {
  const handle = await svc.acquire('lease-probe');
  const page = await svc.inspect();
  await handle.release();
  return page.locks.find((l) => l.name === 'lease-probe')!.leaseRemainingMs;
}

const configModule = ConfigModule.forRoot({ load: [config], ignoreEnvFile: true, isGlobal: true });

describe('LockModule.forRootAsync with @nestjs/config', () => {
  test('useFactory + inject + imports reads ConfigService', async () => {
    const ref = await Test.createTestingModule({
      imports: [
        configModule,
        LockModule.forRootAsync({
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (c: ConfigService) => ({
            keyPrefix: c.getOrThrow<string>('LOCK_PREFIX'),
            ttl: c.getOrThrow<number>('LOCK_TTL'),
          }),
        }),
      ],
    }).compile();
    const svc = ref.get(LockService);
    expect(await prefixOf(svc)).toBe('cfg:');
    expect(await defaultLeaseOf(svc)).toBeGreaterThan(11_000);
    expect(await defaultLeaseOf(svc)).toBeLessThanOrEqual(12_345);
    await ref.close();
  });

  test('useClass builds the options with createLockOptions()', async () => {
    const ref = await Test.createTestingModule({
      imports: [configModule, LockModule.forRootAsync({ imports: [ConfigModule], useClass: LockConfig })],
    }).compile();
    expect(await prefixOf(ref.get(LockService))).toBe('cfg:');
    await ref.close();
  });

  test('useExisting reuses a provider from an imported module', async () => {
    const ref = await Test.createTestingModule({
      imports: [configModule, LockModule.forRootAsync({ imports: [LockConfigModule], useExisting: LockConfig })],
    }).compile();
    expect(await defaultLeaseOf(ref.get(LockService))).toBeGreaterThan(11_000);
    expect(await defaultLeaseOf(ref.get(LockService))).toBeLessThanOrEqual(12_345);
    await ref.close();
  });

  test('an async factory may return a provider instance', async () => {
    const memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRootAsync({ useFactory: async () => ({ provider: memory }) })],
    }).compile();
    expect(ref.get(LockProvider)).toBe(memory);
    await ref.close();
  });

  test('a bad value from config fails at boot with LockOptionsError naming the option', async () => {
    const compile = Test.createTestingModule({
      imports: [LockModule.forRootAsync({ useFactory: () => ({ ttl: 'thirty seconds' as unknown as number }) })],
    }).compile();
    await expect(compile).rejects.toThrow(LockOptionsError);
    await expect(
      Test.createTestingModule({ imports: [LockModule.forRootAsync({ useFactory: () => ({ ttl: -1 }) })] }).compile(),
    ).rejects.toThrow(/ttl must be a finite number/);
  });

  test('isGlobal: false keeps LockService inside the importing module', async () => {
    const dynamic = LockModule.forRoot({ isGlobal: false });
    expect(dynamic.global).toBe(false);
    expect(LockModule.forRoot().global).toBe(true);
  });
});
