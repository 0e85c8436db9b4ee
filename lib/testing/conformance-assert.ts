/**
 * The kit's assertions: each names, in store terms, what the store did wrong
 * ("release() by a non-owner freed the lock"), then what it answered. They
 * throw node's `AssertionError`, which Jest, Vitest and node:test all report.
 */
import { AssertionError } from 'node:assert';
import { isDeepStrictEqual, inspect } from 'node:util';

const shown = (value: unknown): string => inspect(value, { depth: 4, breakLength: Infinity });

function fail(what: string, detail: string): never {
  throw new AssertionError({ message: `${what} (${detail})` });
}

/** `ok` must hold; `what` says what the store did when it does not. */
export function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new AssertionError({ message: what });
}

/** `actual` must deep-equal `expected`. */
export function checkEqual<T>(actual: T, expected: T, what: string): void {
  if (!isDeepStrictEqual(actual, expected)) fail(what, `got ${shown(actual)}, expected ${shown(expected)}`);
}

/** Every field of `expected` must deep-equal that field of `actual`. */
export function checkFields(actual: object | null | undefined, expected: Record<string, unknown>, what: string): void {
  const wrong = Object.keys(expected).filter(
    (k) => !isDeepStrictEqual((actual as Record<string, unknown> | null)?.[k], expected[k]),
  );
  if (wrong.length > 0) fail(what, `got ${shown(actual)}, expected ${shown(expected)}`);
}

/** A grant, not `null`: returns it. */
export function granted<T>(grant: T | null | undefined, what: string): T {
  if (grant === null || grant === undefined) fail(what, `got ${shown(grant)}, expected a grant`);
  return grant;
}

/** `null`: the store refused. */
export function refused(grant: unknown, what: string): void {
  if (grant !== null) fail(what, `got ${shown(grant)}, expected null`);
}

/** `true`, exactly. */
export function isTrue(answer: unknown, what: string): void {
  if (answer !== true) fail(what, `answered ${shown(answer)}, expected true`);
}

/** `false`, exactly. */
export function isFalse(answer: unknown, what: string): void {
  if (answer !== false) fail(what, `answered ${shown(answer)}, expected false`);
}

/** `a > b`. */
export function above(a: number | undefined, b: number, what: string): void {
  if (!(typeof a === 'number' && a > b)) fail(what, `got ${shown(a)}, expected more than ${b}`);
}

/** `a >= b`. */
export function atLeast(a: number | undefined, b: number, what: string): void {
  if (!(typeof a === 'number' && a >= b)) fail(what, `got ${shown(a)}, expected at least ${b}`);
}

/** `a < b`. */
export function below(a: number | undefined, b: number, what: string): void {
  if (!(typeof a === 'number' && a < b)) fail(what, `got ${shown(a)}, expected less than ${b}`);
}

/** `a <= b`. */
export function atMost(a: number | undefined, b: number, what: string): void {
  if (!(typeof a === 'number' && a <= b)) fail(what, `got ${shown(a)}, expected at most ${b}`);
}

/** `text` must match `pattern`. */
export function matches(text: unknown, pattern: RegExp, what: string): void {
  if (typeof text !== 'string' || !pattern.test(text)) fail(what, `got ${shown(text)}, expected to match ${pattern}`);
}

/** The error `send` throws or rejects with; fails with `what` when it succeeds. */
export async function rejection(send: () => unknown, what: string): Promise<Error> {
  try {
    await send();
  } catch (err) {
    return err as Error;
  }
  throw new AssertionError({ message: `${what} (the call succeeded)` });
}
