/**
 * The parent side of the multi-process stores' counter workload (see
 * counter-sections.ts): running the `mutex` workers, and checking the sections
 * they printed.
 */
import { expect } from '@jest/globals';
import type { CounterSection } from './counter-sections.js';
import type { Worker } from './worker-process.js';

/** A section as the parent sees it: with the pid of the worker that ran it. */
export type WorkerSection = CounterSection & { pid: number };

/**
 * Starts `count` workers with `start` (each added to `workers`, for the
 * caller's clean-up), waits until all are ready (`readyMs` each), sends them
 * their go at once, and resolves with their exit codes.
 */
export async function runCounterWorkers(
  workers: Worker[],
  count: number,
  readyMs: number,
  start: () => Worker,
): Promise<Array<number | null>> {
  for (let i = 0; i < count; i++) workers.push(start());
  await Promise.all(workers.map((w) => w.ready(readyMs)));
  for (const w of workers) w.child.send('go');
  return Promise.all(workers.map((w) => w.exited));
}

/** The sections that `workers` printed (the last line of each one's output), in entry order. */
export function workerSections(workers: Worker[]): WorkerSection[] {
  const sections = workers.flatMap((w) => {
    const { pid, sections: own } = JSON.parse(w.stdout().trim().split('\n').pop()!) as {
      pid: number;
      sections: CounterSection[];
    };
    return own.map((s) => ({ ...s, pid }));
  });
  return sections.sort((a, b) => a.enter - b.enter);
}

/** Sections in entry order never overlap (each enters after the one before left), and their fencing tokens increase. */
export function expectSerialSections(sections: WorkerSection[]): void {
  for (let i = 1; i < sections.length; i++) {
    expect(sections[i].enter).toBeGreaterThanOrEqual(sections[i - 1].exit);
    expect(sections[i].token).toBeGreaterThan(sections[i - 1].token);
  }
}
