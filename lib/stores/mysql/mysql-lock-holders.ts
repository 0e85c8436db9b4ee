/**
 * The group holders of a MySQL lock row (shared holds, or a semaphore's
 * permits): the JSON entries of its `holders` column, and whether a request
 * fits beside them.
 */

/** One group holder: owner, fencing token, lease end and grant time (µs since the epoch, database clock), mode. @internal */
export interface MysqlLockHolderEntry {
  readonly o: string;
  readonly t: number;
  readonly e: number;
  readonly s: number;
  readonly m: 'shared' | 'exclusive';
}

/** What a request asks: shared, or exclusive with a limit (1: a plain lock). @internal */
export interface MysqlLockAsk {
  readonly shared: boolean;
  readonly limit: number;
}

/** The live entries of a `holders` column (mysql2 parses JSON on MySQL; MariaDB sends text), at `nowUs`. @internal */
export function liveHolders(holders: unknown, nowUs: number): MysqlLockHolderEntry[] {
  if (holders === null || holders === undefined) return [];
  const list = (
    typeof holders === 'string' || Buffer.isBuffer(holders) ? JSON.parse(String(holders)) : holders
  ) as MysqlLockHolderEntry[];
  return list.filter((h) => h.e > nowUs);
}

/**
 * Whether a request fits beside the live group holders of a row with no
 * plain holder: shared beside shared ones only; exclusive beside exclusive
 * ones of the same limit, fewer than it (a plain request: none at all).
 * @internal
 */
export function fitsHolders(live: readonly MysqlLockHolderEntry[], permits: number | null, ask: MysqlLockAsk): boolean {
  if (ask.shared) return live.every((h) => h.m === 'shared');
  return (
    live.every((h) => h.m === 'exclusive') && live.length < ask.limit && (live.length === 0 || permits === ask.limit)
  );
}

/** The other limit than `limit` the live group holders have (their exclusive ones), or `null`. @internal */
export function otherHeldLimit(
  live: readonly MysqlLockHolderEntry[],
  permits: number | null,
  limit: number,
): number | null {
  return live.some((h) => h.m === 'exclusive') && permits !== null && Number(permits) !== limit
    ? Number(permits)
    : null;
}

/** What a request asks: shared, or exclusive with its limit (1: a plain lock). @internal */
export function mysqlLockAsk(request: { readonly mode?: string; readonly limit?: number }): MysqlLockAsk {
  const shared = request.mode === 'shared';
  return { shared, limit: shared || request.limit === undefined ? 1 : Math.max(1, Math.floor(request.limit)) };
}

/** The fencing tokens a plain request's grant reserves (`fences`, at least 1); a shared hold or a permit: 1. @internal */
export function mysqlFences(request: {
  readonly mode?: string;
  readonly limit?: number;
  readonly fences?: number;
}): number {
  const ask = mysqlLockAsk(request);
  return ask.shared || ask.limit > 1 || request.fences === undefined || !(request.fences > 1)
    ? 1
    : Math.floor(request.fences);
}
