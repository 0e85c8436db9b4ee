import { hostname } from 'node:os';

/** `<hostname>:<pid>`: the default instance id. */
export function defaultInstanceId(): string {
  return `${hostname()}:${process.pid}`;
}
