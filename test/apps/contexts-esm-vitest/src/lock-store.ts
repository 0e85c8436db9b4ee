import { LockModule } from 'nest-lock';

/** In-memory locks, or Redis at LOCK_REDIS_URL (the tests point it where nothing listens: "store down"). */
export const lockModule = () =>
  LockModule.forRoot(process.env.LOCK_REDIS_URL ? { redis: process.env.LOCK_REDIS_URL, commandTimeout: 500 } : {});

/** Each locked handler holds its lock this long, so that concurrent calls meet it. */
export const work = () => new Promise((resolve) => setTimeout(resolve, 600));

/** Patterns and queue names of this run (the Redis transport and BullMQ share the machine's Redis). */
export const runId = process.env.RUN_ID ?? 'local';
