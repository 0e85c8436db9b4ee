import { LockStoreError } from '../../errors/lock.errors.js';
import { providerClosedDetail, storeCauses } from '../../errors/lock.messages.js';
import { TimedList, TimedNode } from '../../shared/timer.js';
import { now } from '../../shared/clock.js';
import type { RedisClients } from './redis-clients.js';
import { isNoScript, type Corkable, type RedisPort } from './redis-client.port.js';
import { scriptOf, type ScriptCall } from './redis-script-calls.js';

/** One bounded Redis call of {@link RedisCommands.call}. @internal */
export interface RedisCommand<T, R> {
  /** The lock operation, for errors (`'acquire'`, `'release'`, …). */
  readonly operation: string;
  /** The lock key, for errors. */
  readonly key?: string;
  /** Sends the command(s) on a connected client. */
  readonly send: (client: RedisPort) => Promise<T>;
  /** Turns the reply into the result, inside the call's promise (it may return a promise, which the call adopts). */
  readonly map?: (reply: T) => R | PromiseLike<R>;
  /** Sent instead when `send` fails with NOSCRIPT (EVAL after EVALSHA). */
  readonly resend?: (client: RedisPort) => Promise<T>;
  /** Runs when the call fails (timed out, refused, or failed in Redis). */
  readonly onError?: () => void;
  /** The client to send on: the main one unless given. */
  readonly client?: RedisPort;
  /** The step of the operation, for errors (`'subscribing to hand-off notices'`). */
  readonly step?: string;
}

/** A lock script call of {@link RedisCommands.script}: the typed script, its input, and what to make of its decoded reply `O`. @internal */
export interface ScriptCommand<I, O, R> {
  readonly operation: string;
  readonly key: string;
  readonly call: ScriptCall<I, O>;
  readonly input: I;
  readonly map: (reply: O) => R | PromiseLike<R>;
  readonly onError?: () => void;
}

/**
 * A Redis call in flight, a member of the {@link TimedList} of calls until it
 * settles: the process's one lock timer bounds every call (instead of a timer
 * per call: every lock operation is one or two calls).
 */
class PendingCall extends TimedNode {
  constructor(private readonly expire: () => void) {
    super();
  }
  onTimer(): void {
    this.expire();
  }
}

/** Calls held back by the cork after which they leave, without waiting for the end of the turn. */
const CORK_FLUSH_CALLS = 16;

/** Where a call failed, for error messages: the key and the step. */
function where(key: string | undefined, step: string | undefined): string {
  return `${key === undefined ? '' : ` (key "${key}")`}${step === undefined ? '' : `, ${step}`}`;
}

/**
 * The command layer of {@link RedisLockProvider}: every Redis call bounded by
 * `commandTimeout` (also while the client connects), failing with
 * {@link LockStoreError}; lock scripts by EVALSHA with EVAL on NOSCRIPT; and
 * the socket writes of calls issued together sent together.
 * @internal
 */
export class RedisCommands {
  /** The calls in flight, each due at its deadline. */
  private readonly inflight = new TimedList();
  /** The client whose socket writes are held back: to the end of this event-loop turn ({@link cork}), or of a {@link coalesce}. */
  private corked: RedisPort | undefined;
  /** The socket {@link cork} holds back, and how many calls it holds. */
  private corkedStream: Corkable | undefined;
  private corkedCalls = 0;
  /** Inside {@link coalesce}: its calls stay together. */
  private coalescing = false;
  private isClosed = false;

  constructor(
    private readonly clients: RedisClients,
    private readonly commandTimeout: number,
  ) {}

  /** After close, every call but a `'leave'` fails at once. */
  close(): void {
    this.isClosed = true;
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Runs a lock script, bounded: EVALSHA, and EVAL when the server's script cache does not have it (NOSCRIPT); `map` gets the decoded reply. */
  script<I, O, R>({ operation, key, call, input, map, onError }: ScriptCommand<I, O, R>): Promise<R> {
    const script = scriptOf(call);
    const keys = call.keys(input);
    const args = call.args(input);
    return this.call<unknown, R>({
      operation,
      key,
      send: (c) => c.evalsha(script.sha, keys, args),
      map: (reply) => map(call.decode(reply)),
      resend: (c) => c.eval(script.source, keys, args),
      onError,
    });
  }

  /**
   * Sends the command on the client once it is connected, within the command
   * timeout, and resolves `map` of its reply (inside the same promise: this is
   * the hot path of every lock operation). A NOSCRIPT error sends `resend`
   * instead. Waiting for the connection counts against the timeout; a call
   * that timed out while waiting is never sent.
   */
  call<T, R = T>(command: RedisCommand<T, R>): Promise<R> {
    const { operation, key, send, map, onError, client = this.clients.main, step } = command;
    let resend = command.resend;
    if (this.isClosed && operation !== 'leave') {
      return Promise.reject(new LockStoreError(operation, `${providerClosedDetail('Redis')}${where(key, step)}`));
    }
    const dbRejected = this.clients.dbRejected;
    if (dbRejected !== undefined && client === this.clients.main) {
      return Promise.reject(this.clients.storeError(operation, client, dbRejected, where(key, step)));
    }
    return new Promise<R>((resolve, reject) => {
      let done = false;
      const fail = (err: unknown): void => {
        if (done) return;
        done = true;
        this.inflight.remove(pending);
        onError?.();
        reject(err instanceof LockStoreError ? err : this.clients.storeError(operation, client, err, where(key, step)));
      };
      const pending = new PendingCall(() => fail(this.clients.noAnswer(operation, client, where(key, step))));
      const ok = (value: T): void => {
        if (done) return;
        done = true;
        this.inflight.remove(pending);
        if (!map) return resolve(value as T & R);
        try {
          resolve(map(value));
        } catch (err) {
          reject(err);
        }
      };
      const failed = (err: unknown): void => {
        if (resend && !done && isNoScript(err)) {
          const again = resend;
          resend = undefined;
          again(client).then(ok, failed);
          return;
        }
        fail(err ?? new Error(storeCauses.unknownError));
      };
      this.inflight.schedule(pending, now() + this.commandTimeout);
      let work: Promise<T>;
      try {
        if (client.status === 'ready') {
          // A lone call leaves at once; holding writes back pays off from the second call in flight on.
          const held = client === this.corked;
          if (!held && this.inflight.size > 1) this.cork(client);
          work = send(client);
          if (held && ++this.corkedCalls >= CORK_FLUSH_CALLS && !this.coalescing) this.flush();
        } else {
          work = this.clients.connected(client).then(() => {
            // Waiting for the connection counts against the timeout; a call that timed out is never sent.
            if (done) throw new LockStoreError(operation, storeCauses.timedOut);
            return send(client);
          });
        }
      } catch (err) {
        failed(err);
        return;
      }
      work.then(ok, failed);
    });
  }

  /**
   * Runs `send`; the calls it makes leave in one socket write (a standalone
   * client; a Cluster client sends them as it would anyway).
   */
  coalesce<T>(send: () => T): T {
    const client = this.clients.main;
    if (this.coalescing || client.status !== 'ready') return send();
    // Held back already (calls in flight): the turn's writes leave together; only no flush in between.
    const stream = client === this.corked ? undefined : client.corkable();
    if (stream) {
      stream.cork();
      this.corked = client;
    }
    this.coalescing = true;
    try {
      return send();
    } finally {
      this.coalescing = false;
      if (stream) {
        this.corked = undefined;
        stream.uncork();
      }
    }
  }

  /**
   * Holds back the socket writes of `client` until the end of this turn of
   * the event loop (setImmediate: after the I/O callbacks of this turn), so
   * that the calls of many callers, woken by one batch of replies or by
   * requests that arrived together, reach Redis in a few writes and reads: a
   * system call on each side is most of what a call costs. Every
   * {@link CORK_FLUSH_CALLS} calls the held writes leave, so Redis works on
   * them while this process prepares the next (one write at the end of the
   * turn would leave each side idle while the other works). Replies are not
   * held back. Only while another call is in flight: a lone call is written
   * at once (holding it back would cost it more than it saves).
   */
  private cork(client: RedisPort): void {
    const stream = client.corkable();
    if (!stream) return;
    stream.cork();
    this.corked = client;
    this.corkedStream = stream;
    this.corkedCalls = 1;
    setImmediate(() => {
      this.corked = this.corkedStream = undefined;
      stream.uncork();
    });
  }

  /** Sends what {@link cork} held back so far; later calls of the turn are held back again. */
  private flush(): void {
    this.corkedCalls = 0;
    this.corkedStream?.uncork();
    this.corkedStream?.cork();
  }
}
