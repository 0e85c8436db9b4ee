import { randomBytes } from 'node:crypto';

const POOL_TOKENS = 256;
let pool = '';
let offset = 0;

/**
 * A fresh 128-bit random owner token, 32 hex characters. Drawn from a pooled,
 * pre-encoded buffer: one syscall and one hex encoding per 256 tokens. @internal
 */
export function newOwnerToken(): string {
  if (offset >= pool.length) {
    pool = randomBytes(16 * POOL_TOKENS).toString('hex');
    offset = 0;
  }
  const token = pool.slice(offset, offset + 32);
  offset += 32;
  return token;
}
