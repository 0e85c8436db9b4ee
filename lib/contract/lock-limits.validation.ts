import { LockOptionsError } from '../errors/lock.errors.js';
import { durationMessage, nameCharacterMessage, nameTooLongMessage } from '../errors/lock.messages.js';
import { MAX_DURATION_MS } from './lock.constants.js';

/**
 * The checks of the limits every store honours (the constants in
 * `lock.constants.ts`): durations and the text of names. The engine runs
 * them on every call's options, the stores on their own options. @internal
 */

/**
 * Checks a duration in ms (absent is fine): finite, at most
 * {@link MAX_DURATION_MS}, and above 0 (`>= 0` with `allowZero`; `>= least`
 * with `least`). @internal
 */
export function assertDuration(value: unknown, option: string, where: string, allowZero: boolean, least = 0): void {
  if (value === undefined) return;
  if (
    typeof value !== 'number' ||
    !(value <= MAX_DURATION_MS) ||
    value < least ||
    (value <= 0 && !(allowZero && value === 0))
  ) {
    throw new LockOptionsError(
      durationMessage(where, option, least > 0 ? `>= ${least}` : allowZero ? '>= 0' : '> 0', value),
    );
  }
}

/** A control character (C0, DEL, C1) or a lone surrogate. */
const REFUSED_CHARACTER =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Checks the text of a name or key prefix already known to be a string: at
 * most `max` UTF-16 code units, no control character, no lone surrogate.
 * `what` names it in the message ("lock name"). @internal
 */
export function assertNameText(text: string, max: number, where: string, what: string): void {
  if (text.length > max) throw new LockOptionsError(nameTooLongMessage(where, what, text, max));
  // test() on the path of every call (no match object); exec() only to word the error.
  if (REFUSED_CHARACTER.test(text)) {
    const at = REFUSED_CHARACTER.exec(text)!.index;
    throw new LockOptionsError(nameCharacterMessage(where, what, text, at, text.charCodeAt(at)));
  }
}
