/**
 * The grants the local hand-off answers keep one hidden class from call to
 * call. On Node 20, an object literal that adds a field after a spread
 * (`{ ...grant, hold }`) gets a new one every time, and every place that
 * reads a grant then misses its inline cache (docs/performance.md, "A
 * client-side regression, found and cut"). Checked in a child process with
 * V8's `%HaveSameMap`, on the build (`npm run build:all`).
 */
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const dist = (file: string): string => pathToFileURL(join(process.cwd(), 'dist/lib', file)).href;

/** Runs the hand-off for `cycles` uncontended waits and answers how many grants had another hidden class than the one before. */
function newShapes(cycles: number): number {
  const script = `
    const { LocalHandOff } = await import(${JSON.stringify(dist('hand-off/local-hand-off.js'))});
    // A store that reserves fencing blocks (as Redis, PostgreSQL and MySQL do), answering with a promise.
    let token = 0;
    const provider = { fenceBlocks: true, acquire: (r) => Promise.resolve({ fencingToken: (token += r.fences), fences: r.fences }) };
    const handOff = new LocalHandOff(provider, { observed: false, emit() {} }, true);
    let previous, changed = 0;
    for (let i = 0; i < ${cycles}; i++) {
      const req = { name: 'n', key: 'lock:n', owner: 'o' + i, wait: true, requestedAt: performance.now(), options: { ttl: 10000, renew: false } };
      const grant = await handOff.acquire(req, (g) => g);
      if (!grant?.hold) throw new Error('expected a grant held in a cohort, got ' + JSON.stringify(grant));
      if (previous && !%HaveSameMap(previous, grant)) changed++;
      previous = grant;
      handOff.left(grant.hold);
    }
    process.stdout.write(String(changed));
  `;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return Number(out);
}

test("a wait's grants from the store keep one hidden class", () => {
  expect(newShapes(50)).toBe(0);
});
