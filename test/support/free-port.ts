/** A free TCP port on 127.0.0.1, for a test's own Redis or PostgreSQL server. */
import { createServer } from 'node:net';

/** A port nobody listens on (and, with `bus`, port + 10000 too, for Cluster). */
export async function freePort(bus = false): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = bus ? 20_000 + Math.floor(Math.random() * 20_000) : 0;
    try {
      const got = await listenOnce(port);
      if (bus) await listenOnce(got + 10_000);
      return got;
    } catch {
      // taken; try another
    }
  }
  throw new Error('no free port found');
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const { port: got } = srv.address() as { port: number };
      srv.close(() => resolve(got));
    });
  });
}
