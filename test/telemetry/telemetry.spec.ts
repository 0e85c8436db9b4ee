import { jest } from '@jest/globals';
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { context, createNoopMeter, metrics, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type HistogramMetricData,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  InMemoryLockProvider,
  LOCK_ATTRIBUTES,
  LOCK_METRICS,
  LockManager,
  LockModule,
  LockOptionsError,
  LockStoreError,
  Locked,
  type LockEvent,
} from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

/** The SDK's reader, collected on demand. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
  async metrics(): Promise<Map<string, MetricData>> {
    const { resourceMetrics } = await this.collect();
    const all = new Map<string, MetricData>();
    for (const scope of resourceMetrics.scopeMetrics) for (const m of scope.metrics) all.set(m.descriptor.name, m);
    return all;
  }
}

/** A store that fails its acquisitions, as a Redis past its command timeout does. */
class FailingStore extends InMemoryLockProvider {
  failing = false;
  override acquire(...args: Parameters<InMemoryLockProvider['acquire']>) {
    if (this.failing) throw new LockStoreError('acquire', 'timed out after 500 ms');
    return super.acquire(...args);
  }
}

function setup(options: { lockNames?: boolean } = {}) {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const store = new FailingStore();
  const locks = new LockManager({ provider: store, telemetry: { meterProvider, tracerProvider, ...options } });
  return { reader, exporter, tracer: tracerProvider.getTracer('test'), store, locks };
}

/** Sum of `value` (or histogram `count`) over the points whose attributes include `attrs`. */
function total(metric: MetricData | undefined, attrs: Record<string, unknown>): number {
  let sum = 0;
  for (const point of metric?.dataPoints ?? []) {
    if (!Object.entries(attrs).every(([k, v]) => point.attributes[k] === v)) continue;
    sum +=
      metric!.dataPointType === DataPointType.HISTOGRAM
        ? (point.value as { count: number }).count
        : (point.value as number);
  }
  return sum;
}

function histogramSum(metric: MetricData | undefined, attrs: Record<string, unknown>): number {
  const h = metric as HistogramMetricData | undefined;
  return (h?.dataPoints ?? [])
    .filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v))
    .reduce((s, p) => s + (p.value.sum ?? 0), 0);
}

const NAME = LOCK_ATTRIBUTES.name;
const OUTCOME = LOCK_ATTRIBUTES.waitOutcome;

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});

describe('OpenTelemetry metrics', () => {
  test('count each outcome, the waiters and holders of the moment, a known wait and a lost lease', async () => {
    const { reader, store, locks } = setup();

    // acquired, uncontended
    await locks.withLock('job:1', () => sleep(20), { label: 'job' });

    // acquired after a wait of ~300 ms: held by another instance, released later
    const release = await store.hold('job:2');
    const waiting = locks.withLock('job:2', () => undefined, { label: 'job', onHeld: 'wait', waitTimeout: 10_000 });
    await sleep(100);
    let m = await reader.metrics();
    expect(total(m.get(LOCK_METRICS.waitActive), { [NAME]: 'job' })).toBe(1);
    await sleep(200);
    await release();
    await waiting;

    // held (a try), timeout, aborted, store error
    const releaseAgain = await store.hold('job:3');
    await expect(locks.withLock('job:3', () => undefined, { label: 'job' })).rejects.toThrow('held');
    await expect(locks.withLock('job:3', () => undefined, { label: 'job', onHeld: 'skip' })).resolves.toBeUndefined();
    await expect(
      locks.withLock('job:3', () => undefined, { label: 'job', onHeld: 'wait', waitTimeout: 50 }),
    ).rejects.toThrow(/waited|timeout|wait/i);
    const abort = new AbortController();
    const aborted = locks.acquire('job:3', { label: 'job', signal: abort.signal });
    setTimeout(() => abort.abort(new Error('client went away')), 30);
    await expect(aborted).rejects.toThrow('client went away');
    await releaseAgain();
    store.failing = true;
    await expect(locks.withLock('job:4', () => undefined, { label: 'job', onHeld: 'wait' })).rejects.toBeInstanceOf(
      LockStoreError,
    );
    await expect(locks.tryAcquire('job:4', { label: 'job' })).rejects.toBeInstanceOf(LockStoreError);
    store.failing = false;

    // a holder of the moment, and a lease lost while held
    const held = await locks.acquire('job:5', { label: 'job' });
    await locks.withLock('job:6', () => sleep(250), { label: 'job', ttl: 100, renew: false });

    m = await reader.metrics();
    const wait = m.get(LOCK_METRICS.waitDuration);
    expect(wait?.descriptor.unit).toBe('s');
    expect(total(wait, { [NAME]: 'job', [OUTCOME]: 'acquired' })).toBe(4); // job:1, job:2, job:5, job:6
    expect(total(wait, { [NAME]: 'job', [OUTCOME]: 'held' })).toBe(2);
    expect(total(wait, { [NAME]: 'job', [OUTCOME]: 'timeout' })).toBe(1);
    expect(total(wait, { [NAME]: 'job', [OUTCOME]: 'aborted' })).toBe(1);
    expect(total(wait, { [NAME]: 'job', [OUTCOME]: 'store_error' })).toBe(2);
    expect(total(wait, { [LOCK_ATTRIBUTES.storeKind]: 'memory' })).toBe(10);
    // The one long wait (~300 ms) dominates the acquired waits' sum; the margin is wide.
    const acquiredSum = histogramSum(wait, { [OUTCOME]: 'acquired' });
    expect(acquiredSum).toBeGreaterThanOrEqual(0.28);
    expect(acquiredSum).toBeLessThan(2);
    expect(total(m.get(LOCK_METRICS.waitActive), { [NAME]: 'job' })).toBe(0);
    expect(total(m.get(LOCK_METRICS.holdActive), { [NAME]: 'job' })).toBe(1);
    const hold = m.get(LOCK_METRICS.holdDuration);
    expect(total(hold, { [LOCK_ATTRIBUTES.holdOutcome]: 'released' })).toBe(2); // job:1, job:2
    expect(total(hold, { [LOCK_ATTRIBUTES.holdOutcome]: 'lost' })).toBe(1); // job:6
    expect(total(m.get(LOCK_METRICS.leaseLosses), { [NAME]: 'job' })).toBe(1);

    await held.release();
    m = await reader.metrics();
    expect(total(m.get(LOCK_METRICS.holdActive), { [NAME]: 'job' })).toBe(0);
    expect(total(m.get(LOCK_METRICS.holdDuration), { [LOCK_ATTRIBUTES.holdOutcome]: 'released' })).toBe(3);
  });

  test('names without a label are _OTHER unless lockNames allows them', async () => {
    const a = setup();
    await a.locks.withLock('account:42', () => undefined);
    expect(total((await a.reader.metrics()).get(LOCK_METRICS.waitDuration), { [NAME]: '_OTHER' })).toBe(1);
    const b = setup({ lockNames: true });
    await b.locks.withLock('account:42', () => undefined);
    expect(total((await b.reader.metrics()).get(LOCK_METRICS.waitDuration), { [NAME]: 'account:42' })).toBe(1);
  });

  test('@Locked labels a lock by its static name, or by Class.method when the name is a function', async () => {
    const reader = new TestReader();
    @Injectable()
    class Accounts {
      @Locked((id: string) => `account:${id}`)
      async recompute(_id: string) {}
      @Locked('nightly')
      async nightly() {}
    }
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ telemetry: { meterProvider: new MeterProvider({ readers: [reader] }) } })],
      providers: [Accounts],
    }).compile();
    const accounts = ref.get(Accounts);
    await accounts.recompute('1');
    await accounts.recompute('2');
    await accounts.nightly();
    const wait = (await reader.metrics()).get(LOCK_METRICS.waitDuration);
    expect(total(wait, { [NAME]: 'Accounts.recompute' })).toBe(2);
    expect(total(wait, { [NAME]: 'nightly' })).toBe(1);
    expect(total(wait, { [NAME]: 'account:1' })).toBe(0);
    await ref.close();
  });
});

describe('OpenTelemetry spans', () => {
  test('a wait that queued is a child span of the caller, with the label, the store and the fencing token', async () => {
    const { exporter, tracer, store, locks } = setup();
    const release = await store.hold('report:7');
    setTimeout(() => void release(), 200);
    let token = 0;
    await inSpan(tracer, 'GET /report', () =>
      locks.withLock('report:7', (lock) => (token = lock.fencingToken), {
        label: 'report',
        onHeld: 'wait',
        waitTimeout: 10_000,
      }),
    );
    // Not waited: no span.
    await inSpan(tracer, 'GET /fast', () =>
      locks.withLock('report:8', () => undefined, { label: 'report', onHeld: 'wait' }),
    );

    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === 'GET /report')!;
    const waits = spans.filter((s) => s.name.startsWith('lock wait'));
    expect(waits).toHaveLength(1);
    const [wait] = waits;
    expect(wait.name).toBe('lock wait report');
    expect(wait.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(wait.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(wait.attributes).toMatchObject({
      [NAME]: 'report',
      [LOCK_ATTRIBUTES.storeKind]: 'memory',
      [LOCK_ATTRIBUTES.fencingToken]: token,
      [OUTCOME]: 'acquired',
    });
    const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    const waited = ms(wait.endTime) - ms(wait.startTime);
    expect(waited).toBeGreaterThanOrEqual(150);
    expect(waited).toBeLessThan(2_000);
  });

  test('a wait that timed out is an error span', async () => {
    const { exporter, tracer, store, locks } = setup();
    const release = await store.hold('report:9');
    await inSpan(tracer, 'GET /slow', () =>
      locks
        .withLock('report:9', () => undefined, { label: 'report', onHeld: 'wait', waitTimeout: 80 })
        .catch(() => undefined),
    );
    await release();
    const wait = exporter.getFinishedSpans().find((s) => s.name === 'lock wait report')!;
    expect(wait.status.code).toBe(2); // ERROR
    expect(wait.attributes[OUTCOME]).toBe('timeout');
  });
});

describe('telemetry switch', () => {
  test("'auto' without a registered SDK subscribes nothing: the lock path sees no listener", async () => {
    const locks = new LockManager({ provider: new InMemoryLockProvider() });
    expect((locks as unknown as { listeners: unknown[] }).listeners).toHaveLength(0);
  });

  test("'auto' with the package installed and no SDK: no event is built on any path, until someone listens", async () => {
    expect(metrics.getMeterProvider().getMeter('any')).toBe(createNoopMeter()); // no SDK registered
    const store = new FailingStore();
    const locks = new LockManager({ provider: store, telemetry: 'auto' });
    const emit = jest.spyOn(locks as unknown as { emit(event: LockEvent): void }, 'emit');
    const calls = async (): Promise<void> => {
      await locks.withLock('e', () => undefined, { onHeld: 'wait' });
      const handle = (await locks.tryAcquire('e'))!;
      await handle.extend(5_000);
      await locks.withLock('e', () => undefined, { onHeld: 'skip' }); // held: contended, skipped
      await expect(locks.withLock('e', () => undefined, { onHeld: 'throw' })).rejects.toThrow(); // held: contended
      await expect(locks.withLock('e', () => undefined, { onHeld: 'wait', waitTimeout: 20 })).rejects.toThrow(); // timeout
      await handle.release();
      store.failing = true;
      await expect(locks.withLock('f', () => undefined)).rejects.toThrow(LockStoreError); // store-error
      store.failing = false;
    };

    await calls();
    expect((locks as unknown as { listeners: unknown[] }).listeners).toHaveLength(0);
    expect(emit).not.toHaveBeenCalled();

    // The same calls with a listener: every path above emits (so the spy sees what a path would build).
    const seen: string[] = [];
    const unsubscribe = locks.subscribe((e) => seen.push(e.type));
    await calls();
    unsubscribe();
    expect(new Set(seen)).toEqual(
      new Set([
        'waiting',
        'acquired',
        'answered',
        'released',
        'extended',
        'contended',
        'skipped',
        'timeout',
        'store-error',
      ]),
    );
    expect(emit).toHaveBeenCalledTimes(seen.length);
  });

  test("'auto' with only a tracer provider registered records spans and no metrics", async () => {
    const exporter = new InMemorySpanExporter();
    expect(
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })),
    ).toBe(true);
    try {
      const store = new InMemoryLockProvider();
      const locks = new LockManager({ provider: store });
      const release = await store.hold('g');
      setTimeout(() => void release(), 50);
      await locks.withLock('g', () => undefined, { label: 'global-tracer', onHeld: 'wait', waitTimeout: 10_000 });
      expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['lock wait global-tracer']);
      expect(metrics.getMeterProvider().getMeter('any')).toBe(createNoopMeter());
    } finally {
      trace.disable();
    }
  });

  test("'auto' with a registered SDK records, false does not", async () => {
    const reader = new TestReader();
    expect(metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))).toBe(true);
    try {
      const on = new LockManager({ provider: new InMemoryLockProvider() });
      const off = new LockManager({ provider: new InMemoryLockProvider(), telemetry: false });
      await on.withLock('a', () => undefined, { label: 'auto-on' });
      await off.withLock('a', () => undefined, { label: 'auto-off' });
      const wait = (await reader.metrics()).get(LOCK_METRICS.waitDuration);
      expect(total(wait, { [NAME]: 'auto-on' })).toBe(1);
      expect(total(wait, { [NAME]: 'auto-off' })).toBe(0);
      expect((off as unknown as { listeners: unknown[] }).listeners).toHaveLength(0);
    } finally {
      metrics.disable();
    }
  });

  test('the user listener and telemetry both get every event; bad telemetry options fail with the option named', async () => {
    const events: LockEvent[] = [];
    const reader = new TestReader();
    const locks = new LockManager({
      provider: new InMemoryLockProvider(),
      onEvent: (e) => events.push(e),
      telemetry: { meterProvider: new MeterProvider({ readers: [reader] }) },
    });
    await locks.withLock('both', () => undefined, { label: 'both', onHeld: 'wait' });
    expect(events.map((e) => e.type)).toEqual(['waiting', 'acquired', 'answered', 'released']);
    expect(total((await reader.metrics()).get(LOCK_METRICS.waitDuration), { [NAME]: 'both' })).toBe(1);
    expect(
      () => new LockManager({ provider: new InMemoryLockProvider(), telemetry: { lockNames: 'yes' as never } }),
    ).toThrow(LockOptionsError);
    expect(
      () => new LockManager({ provider: new InMemoryLockProvider(), telemetry: { meterProvider: {} as never } }),
    ).toThrow(/telemetry.meterProvider/);
  });
});

function inSpan<T>(tracer: Tracer, name: string, fn: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}
