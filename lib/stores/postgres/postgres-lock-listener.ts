import type { Client } from 'pg';
import { storeCauses } from '../../errors/lock.messages.js';
import type { PostgresLockDatabase } from './postgres-lock-database.js';
import { postgresSql } from './postgres-lock-statements.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';

/**
 * What a listener hears, handed to the handler given to
 * {@link PostgresLockListener.listen}: a NOTIFY `<next>:<key>` (the lock
 * `key` changed hands or its line moved, see `PostgresLockWaiting.wake`), or
 * `null` when notifications may have been missed (the connection was lost,
 * or came back) and everyone looks again.
 * @internal
 */
export type PostgresLockNotice = { readonly key: string; readonly next: string } | null;

/**
 * The one connection that `LISTEN`s on the table's channel, opened on the
 * first wait, checked by the waiters' heartbeat, and reopened (with backoff)
 * while anyone waits after it was lost. What it hears goes to the handler
 * given to {@link listen}.
 * @internal
 */
export class PostgresLockListener {
  private client?: Client;
  private connecting?: Promise<Client>;
  private reconnectTimer?: ReturnType<typeof setTimeout>;
  private reconnectDelay = 100;
  /** The handler given to {@link listen}, and whether anyone still waits (else a lost connection is not reopened). */
  private heard: (notice: PostgresLockNotice) => void = () => undefined;
  private wanted: () => boolean = () => false;
  /** Checks and reconnections in flight, for {@link settled}. */
  private readonly pending = new Set<Promise<unknown>>();
  /** `statements/listen.sql` and `statements/alive.sql`. */
  private readonly listenSql: string;
  private readonly aliveSql: string;

  constructor(
    private readonly database: PostgresLockDatabase,
    private readonly tables: PostgresLockTables,
  ) {
    this.listenSql = postgresSql('listen', tables);
    this.aliveSql = postgresSql('alive', tables);
  }

  /** Whether it is connected and listening. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /**
   * The listen connection, connected and listening; connects it if needed.
   * What it hears from now on goes to `heard`; `wanted` tells whether anyone
   * still waits (else a lost connection is not reopened).
   */
  listen(heard: (notice: PostgresLockNotice) => void, wanted: () => boolean): Promise<Client> {
    this.heard = heard;
    this.wanted = wanted;
    return this.open();
  }

  private open(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    if (!this.connecting) {
      this.connecting = this.connect().finally(() => {
        this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  /** A round trip on the connection, if there is one; a failure counts as the connection lost. */
  check(): void {
    const client = this.client;
    if (!client) return;
    this.track(
      this.database
        .bounded('listen', undefined, () =>
          client.query({ text: this.aliveSql, query_timeout: this.database.commandTimeout } as never),
        )
        .catch(() => this.lost(client)),
    );
  }

  /** Stops reconnecting (the provider closes). */
  stop(): void {
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
  }

  /** Resolves when no check or reconnection is in flight. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Ends the connection. */
  async end(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<Client> {
    const client = this.database.client();
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => {
      const colon = msg.payload?.indexOf(':') ?? -1;
      if (msg.channel === this.tables.raw && colon >= 0)
        this.heard({ key: msg.payload!.slice(colon + 1), next: msg.payload!.slice(0, colon) });
    });
    try {
      await client.connect();
      await client.query({ text: this.listenSql, query_timeout: this.database.commandTimeout } as never);
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    if (this.database.closed) {
      await client.end().catch(() => undefined);
      throw new Error(storeCauses.providerClosed);
    }
    this.client = client;
    this.reconnectDelay = 100;
    return client;
  }

  /** The connection failed or ended: waiters re-check now (a NOTIFY may be lost), and it reconnects. */
  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    if (this.database.closed) return;
    this.heard(null);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.database.closed || this.reconnectTimer !== undefined || !this.wanted()) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.database.closed || this.client || !this.wanted()) return;
      this.track(
        this.open().then(
          () => this.heard(null), // notifications sent while disconnected are lost: look again
          () => {
            this.reconnectDelay = Math.min(this.reconnectDelay * 2, 2_000);
            this.scheduleReconnect();
          },
        ),
      );
    }, this.reconnectDelay);
    this.reconnectTimer.unref?.();
  }

  private track(work: Promise<unknown>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work)).catch(() => undefined);
  }
}
