import KeyvRedis, { createKeyv, type RedisClientType } from '@keyv/redis';
import { CACHE_MANAGER, CacheModule, type Cache } from '@nestjs/cache-manager';
import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LockExceptionFilter, LockModule } from 'nest-lock';
import { ReportController } from './report.controller.js';

/** The node-redis client of the cache's Keyv store (cache-manager's `stores`, Keyv's `store`, @keyv/redis' `client`). */
export function cacheClient(cache: Cache): RedisClientType {
  return (cache.stores[0].store as KeyvRedis<unknown>).client as RedisClientType;
}

@Module({
  imports: [
    // Nest's caching docs with Redis: cache-manager over Keyv and @keyv/redis (node-redis).
    CacheModule.registerAsync({
      isGlobal: true,
      useFactory: () => ({
        stores: [createKeyv({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', name: process.env.CLIENT_NAME ?? 'cache' })],
      }),
    }),
    // The locks on the cache's connection: no second client library, no second connection pool.
    LockModule.forRootAsync({
      inject: [CACHE_MANAGER],
      useFactory: (cache: Cache) => ({ redis: cacheClient(cache), keyPrefix: process.env.LOCK_PREFIX ?? 'lock:' }),
    }),
  ],
  controllers: [ReportController],
  providers: [{ provide: APP_FILTER, useClass: LockExceptionFilter }],
})
export class AppModule {}
