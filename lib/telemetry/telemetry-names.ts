/**
 * Names of the OpenTelemetry instruments this library records, following the
 * OpenTelemetry naming rules (a project namespace, durations in seconds,
 * modeled on the database connection-pool metrics
 * `db.client.connection.wait_time` and `…pending_requests`). Use them in
 * views and dashboards.
 */
export const LOCK_METRICS = {
  /** Histogram (s): from a call for a lock to its answer, by `nest_lock.wait.outcome`. */
  waitDuration: 'nest_lock.wait.duration',
  /** UpDownCounter (`{request}`): calls waiting for a lock now (`onHeld: 'wait'`, `acquire()`). */
  waitActive: 'nest_lock.wait.active',
  /** Histogram (s): from grant to release or loss, by `nest_lock.hold.outcome`. */
  holdDuration: 'nest_lock.hold.duration',
  /** UpDownCounter (`{lock}`, asynchronous): locks this process holds now. */
  holdActive: 'nest_lock.hold.active',
  /** Counter (`{lease}`): leases lost while held (expired unrenewed, taken over, `maxHold`). */
  leaseLosses: 'nest_lock.lease.losses',
} as const;

/** Attribute names on the metrics and spans. */
export const LOCK_ATTRIBUTES = {
  /** The call's `label` (the `@Locked` name template by default), the name if `lockNames` allows it, else `_OTHER`. */
  name: 'nest_lock.name',
  /** The store: `memory`, `redis`, `postgres` (`LockProvider.kind`). */
  storeKind: 'nest_lock.store.kind',
  /** `acquired`, `held`, `timeout`, `store_error`, `aborted`. */
  waitOutcome: 'nest_lock.wait.outcome',
  /** `released` or `lost`. */
  holdOutcome: 'nest_lock.hold.outcome',
  /** The grant's fencing token (spans only). */
  fencingToken: 'nest_lock.fencing_token',
} as const;

/** The `nest_lock.name` value of a call that has no label, when lock names are not recorded. */
export const OTHER_LOCK_NAME = '_OTHER';
