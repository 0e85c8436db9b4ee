import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { LockEvent } from '../contract/lock-events.interface.js';
import { LockService } from '../nest/lock.service.js';
import { LOCK_DASHBOARD_OPTIONS, type ResolvedDashboardOptions } from './lock-dashboard-options.interface.js';
import type { DashboardCounts, DashboardEvent } from './lock-dashboard-data.interface.js';

/** Names whose counts are kept (the most recently active ones). */
const MAX_NAMES = 500;
const MAX_DETAIL = 300;

type Counts = { -readonly [K in keyof DashboardCounts]: DashboardCounts[K] };

/** Removes credentials from URLs (`redis://:secret@host` → `redis://***@host`) and bounds the length. */
export function redact(text: string): string {
  const clean = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1***@');
  return clean.length > MAX_DETAIL ? `${clean.slice(0, MAX_DETAIL)}…` : clean;
}

/**
 * The lock page's memory: the last events (acquired, released, lost,
 * timeouts, store errors) and counts per lock name, fed by
 * the engine's `subscribe()` while the page's module lives. Bounded in
 * events and names. @internal
 */
@Injectable()
export class LockEventLog implements OnModuleInit, OnModuleDestroy {
  private readonly recentEvents: DashboardEvent[] = [];
  private readonly counts = new Map<string, Counts>();
  private unsubscribe: (() => void) | undefined;
  constructor(
    private readonly locks: LockService,
    @Inject(LOCK_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.locks.subscribe((event) => this.record(event));
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  /** Newest first. */
  recent(): DashboardEvent[] {
    return [...this.recentEvents].reverse();
  }

  /** Most recently active names first. */
  countsByName(): DashboardCounts[] {
    return [...this.counts.values()].reverse();
  }

  private record(event: LockEvent): void {
    let entry: DashboardEvent;
    switch (event.type) {
      case 'acquired':
        entry = {
          at: new Date().toISOString(),
          type: 'acquired',
          name: event.name,
          fencingToken: event.fencingToken,
          waitMs: Math.round(event.waitMs),
        };
        break;
      case 'released':
        entry = {
          at: new Date().toISOString(),
          type: 'released',
          name: event.name,
          fencingToken: event.fencingToken,
          heldMs: Math.round(event.heldMs),
        };
        break;
      case 'lost':
        entry = {
          at: new Date().toISOString(),
          type: 'lost',
          name: event.name,
          fencingToken: event.fencingToken,
          heldMs: Math.round(event.heldMs),
          detail: redact(event.reason),
        };
        break;
      case 'timeout':
        entry = { at: new Date().toISOString(), type: 'timeout', name: event.name, waitMs: Math.round(event.waitMs) };
        break;
      case 'store-error':
        entry = {
          at: new Date().toISOString(),
          type: 'store-error',
          name: event.name,
          detail: redact(`${event.operation}: ${event.error.message}`),
        };
        break;
      default:
        return;
    }
    this.recentEvents.push(entry);
    if (this.recentEvents.length > this.options.recentEvents) this.recentEvents.shift();
    this.count(entry);
  }

  private count(entry: DashboardEvent): void {
    let c = this.counts.get(entry.name);
    if (c)
      this.counts.delete(entry.name); // re-inserted last: the most recently active
    else c = { name: entry.name, acquired: 0, released: 0, lost: 0, timeouts: 0, storeErrors: 0 };
    if (entry.type === 'acquired') c.acquired++;
    else if (entry.type === 'released') c.released++;
    else if (entry.type === 'lost') c.lost++;
    else if (entry.type === 'timeout') c.timeouts++;
    else c.storeErrors++;
    this.counts.set(entry.name, c);
    if (this.counts.size > MAX_NAMES) this.counts.delete(this.counts.keys().next().value!);
  }
}
