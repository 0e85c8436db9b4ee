import type { INestApplication } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

/** The two HTTP platforms every e2e scenario runs on. */
export const httpAdapters: ReadonlyArray<readonly [string, () => ExpressAdapter | FastifyAdapter]> = [
  ['express', () => new ExpressAdapter()],
  ['fastify', () => new FastifyAdapter()],
];

/** Creates and initialises an app on the given platform, ready for supertest. */
export async function createHttpApp(
  ref: TestingModule,
  adapter: ExpressAdapter | FastifyAdapter,
): Promise<INestApplication> {
  const app = ref.createNestApplication(adapter);
  await app.init();
  if (adapter instanceof FastifyAdapter) await adapter.getInstance().ready();
  return app;
}
