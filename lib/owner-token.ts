import { randomBytes } from 'node:crypto';

const POOL_TOKENS = 256;
let pool = Buffer.alloc(0);
let offset = 0;

/** A fresh 128-bit random owner token, hex. Drawn from a pooled buffer: one syscall per 256 tokens. @internal */
export function newOwnerToken(): string {
  if (offset >= pool.length) {
    pool = randomBytes(16 * POOL_TOKENS);
    offset = 0;
  }
  const token = pool.toString('hex', offset, offset + 16);
  offset += 16;
  return token;
}
