import { randomBytes, randomFillSync } from 'node:crypto';

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

/** Between the random part of an owner token and the instance id it names. */
const INSTANCE_MARK = '@';

/**
 * An owner token that names the instance taking the lock:
 * `<32 hex>@<instance id, URI-encoded>` (no spaces, so stores can put it in
 * messages). Stores keep owner tokens as they are, so
 * {@link LockProviderCapabilities.holder} can tell which instance holds a key. Only
 * callers that ask for it (leader election) pay for the longer token. @internal
 */
export function ownerTokenFor(instanceId: string): string {
  return newOwnerToken() + INSTANCE_MARK + encodeURIComponent(instanceId);
}

/** The instance id an owner token names (see {@link ownerTokenFor}), or `undefined` for a plain token. @internal */
export function instanceIdOf(owner: string): string | undefined {
  if (owner.length <= 33 || owner[32] !== INSTANCE_MARK) return undefined;
  try {
    return decodeURIComponent(owner.slice(33));
  } catch {
    return undefined;
  }
}

/**
 * Owner tokens that all name one instance (see {@link ownerTokenFor}), drawn
 * from a pool like {@link newOwnerToken}: the instance id is encoded once, and
 * a token is a slice of the pool joined to it (no copy until a store sends
 * it), so it costs what a plain one does. @internal
 */
export class InstanceOwnerTokens {
  private readonly suffix: string;
  private pool = '';
  private offset = 0;
  /** Where each pool's random bytes are drawn (one buffer, reused). */
  private readonly random = Buffer.allocUnsafe(16 * POOL_TOKENS);

  constructor(instanceId: string) {
    this.suffix = INSTANCE_MARK + encodeURIComponent(instanceId);
  }

  next(): string {
    if (this.offset >= this.pool.length) {
      this.pool = randomFillSync(this.random).toString('hex');
      this.offset = 0;
    }
    const token = this.pool.slice(this.offset, this.offset + 32) + this.suffix;
    this.offset += 32;
    return token;
  }
}
