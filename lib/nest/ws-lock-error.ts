import type { LockErrorPayload } from './lock-error-payload.js';

/** What the filter needs of a socket.io socket or a `ws` WebSocket. */
interface WsClient {
  emit?: (event: string, data: unknown) => unknown;
  send?: (data: string) => unknown;
  handshake?: unknown;
  readyState?: number;
}

const WS_OPEN = 1;

/**
 * Tells a WebSocket client about a lock error, duck-typed on its adapter:
 * socket.io gets an `exception` event with the payload, and the emit's ack,
 * when it asked for one, is called with the payload too; a `ws` client gets
 * the message `{ event: 'exception', data }` (Nest's `ws` message format).
 * `args` are the handler's arguments as Nest passes them: client, data, ack
 * (socket.io), then the pattern. @internal
 */
export function sendToWsClient(args: unknown[], payload: LockErrorPayload): void {
  const client = args[0] as WsClient | null | undefined;
  if (client == null) return;
  if (client.handshake === undefined && typeof client.send === 'function' && typeof client.readyState === 'number') {
    if (client.readyState === WS_OPEN) client.send(JSON.stringify({ event: 'exception', data: payload }));
    return;
  }
  client.emit?.('exception', payload);
  const ack = args.slice(1).find((arg): arg is (data: unknown) => void => typeof arg === 'function');
  ack?.(payload);
}
