import type { Client } from 'pg';
import { storeCauses } from '../../errors/lock.messages.js';
import type { PostgresLockDatabase } from './postgres-lock-database.js';
import { postgresSql } from './postgres-lock-statements.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';

/** What the listen connection tells its owner, and asks of it. @internal */
export interface PostgresLockListenerEvents {
  /** A NOTIFY on the table's channel arrived, with its payload. */
  readonly notified: (payload: string) => void;
  /** Notifications may have been missed (the connection was lost, or came back): everyone looks again. */
  readonly missed: () => void;
  /** Whether anyone still waits (else a lost connection is not reopened). */
  readonly wanted: () => boolean;
  /** Keeps background work for `close()` to wait for. */
  readonly track: <T>(work: Promise<T>) => Promise<T>;
}

/**
 * The one connection that `LISTEN`s on the table's channel, opened on the
 * first wait, checked by the waiters' heartbeat, and reopened (with backoff)
 * while anyone waits after it was lost.
 * @internal
 */
export class PostgresLockListener {
  private client?: Client;
  private connecting?: Promise<Client>;
  private reconnectTimer?: ReturnType<typeof setTimeout>;
  private reconnectDelay = 100;
  /** `statements/listen.sql` and `statements/alive.sql`. */
  private readonly listenSql: string;
  private readonly aliveSql: string;

  constructor(
    private readonly database: PostgresLockDatabase,
    private readonly tables: PostgresLockTables,
    private readonly events: PostgresLockListenerEvents,
  ) {
    this.listenSql = postgresSql('listen', tables);
    this.aliveSql = postgresSql('alive', tables);
  }

  /** Whether it is connected and listening. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** The listen connection, connected and listening; connects it if needed. */
  listen(): Promise<Client> {
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
    void this.events.track(
      this.database
        .bounded('listen', undefined, () => client.query({ text: this.aliveSql, query_timeout: this.database.commandTimeout } as never))
        .catch(() => this.lost(client)),
    );
  }

  /** Stops reconnecting (the provider closes). */
  stop(): void {
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
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
      if (msg.channel === this.tables.raw && msg.payload !== undefined) this.events.notified(msg.payload);
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
    this.events.missed();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.database.closed || this.reconnectTimer !== undefined || !this.events.wanted()) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.database.closed || this.client || !this.events.wanted()) return;
      void this.events.track(
        this.listen().then(
          () => this.events.missed(), // notifications sent while disconnected are lost: look again
          () => {
            this.reconnectDelay = Math.min(this.reconnectDelay * 2, 2_000);
            this.scheduleReconnect();
          },
        ),
      );
    }, this.reconnectDelay);
    this.reconnectTimer.unref?.();
  }
}
