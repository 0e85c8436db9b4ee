// Minimal declarations for the dev dependencies that ship no types (bench only).

declare module 'redlock' {
  interface RedlockLock {
    unlock(): Promise<void>;
  }
  interface RedlockOptions {
    driftFactor?: number;
    retryCount?: number;
    retryDelay?: number;
    retryJitter?: number;
  }
  class Redlock {
    constructor(clients: unknown[], options?: RedlockOptions);
    lock(resource: string, ttl: number): Promise<RedlockLock>;
    quit(): Promise<void>;
    on(event: 'clientError', listener: (err: Error) => void): this;
  }
  export = Redlock;
}

declare module 'autocannon' {
  namespace autocannon {
    interface AutocannonRequest {
      method?: string;
      path?: string;
      setupRequest?: (req: { path: string; method?: string }, context: unknown) => { path: string; method?: string };
    }
    interface AutocannonOptions {
      url: string;
      connections?: number;
      duration?: number;
      pipelining?: number;
      requests?: AutocannonRequest[];
    }
    interface AutocannonResult {
      requests: { average: number; total: number };
      latency: { p50: number; p99: number; average: number };
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      duration: number;
    }
  }
  function autocannon(options: autocannon.AutocannonOptions): Promise<autocannon.AutocannonResult>;
  export = autocannon;
}
