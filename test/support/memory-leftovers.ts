import type { InMemoryLockProvider } from '../../lib/index.js';

/** `[key]` when the in-memory store still keeps an entry for `key` (held, awaited or idle), else `[]`. */
export function memoryLeftovers(provider: InMemoryLockProvider, key: string): string[] {
  const { entries } = provider as unknown as { entries: Map<string, unknown> };
  return entries.has(key) ? [key] : [];
}
