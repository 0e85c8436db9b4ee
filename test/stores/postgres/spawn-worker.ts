/** Starts the compiled `pg-worker` fixture in a child process (see fixtures/pg-worker.ts). */
import { compiledScript } from '../../support/paths.js';
import { POSTGRES_URL } from '../../support/pg-test-env.js';
import { startWorkerProcess, type Worker } from '../../support/worker-process.js';

export type { Worker };

export function startWorker(mode: string, table: string, env: Record<string, string> = {}): Worker {
  return startWorkerProcess(compiledScript(new URL('./fixtures/pg-worker.js', import.meta.url)), mode, {
    PG_URL: POSTGRES_URL,
    PG_TABLE: table,
    ...env,
  });
}
