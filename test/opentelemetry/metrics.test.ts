/**
 * The opt-in metrics, read through the SDK's own collection: operations by
 * final state, attempts by class, the pending queue and the operations an
 * outage gate holds, against the reference server.
 */
import { type DataPoint, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import { instrument } from '../../src/opentelemetry.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

class TestReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** Each metric's data points as `attribute value → value` (the one attribute, or '' without one). */
async function read(reader: TestReader): Promise<Record<string, Record<string, number>>> {
  const { resourceMetrics } = await reader.collect();
  const out: Record<string, Record<string, number>> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      const points: Record<string, number> = {};
      for (const point of metric.dataPoints as DataPoint<number>[]) {
        points[String(Object.values(point.attributes)[0] ?? '')] = point.value;
      }
      out[metric.descriptor.name] = points;
    }
  }
  return out;
}

function metered() {
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  return { reader, meter: provider.getMeter('oncely-test') };
}

describe('instrument(client, { meter })', () => {
  it('counts operations by final state and attempts by class; the queue goes back to zero', async () => {
    const h = await harness({ policy: { backoff: { jitter: 'none' } } });
    const { reader, meter } = metered();
    instrument(h.client, { meter });
    h.server.script({ kind: 'status', status: 503, match: { key: 'm2' } });
    h.server.script({ kind: 'status', status: 422, match: { key: 'm3' } });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'm1', json: {} }));
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'm2', json: {} }));
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'm3', json: {} })).catch(() => undefined);
    const metrics = await read(reader);
    expect(metrics['oncely.operations']).toEqual({ succeeded: 2, blocked: 1 });
    expect(metrics['oncely.attempts']).toEqual({ completed: 2, retryable: 1, correctable: 1 });
    expect(metrics['oncely.operations.pending']).toEqual({ '': 0 });
  });

  it('the queue depth counts what waits offline; the held count follows the outage gate', async () => {
    let online = false;
    const wake = new Set<() => void>();
    const h = await harness({
      connectivity: {
        online: () => online,
        onOnline: (fn) => {
          wake.add(fn);
          return () => wake.delete(fn);
        },
      },
      policy: { budget: { capacity: 1, ratio: 0.1, probeIntervalMs: 10_000 }, backoff: { jitter: 'none' } },
      endpoints: { 'POST /payments': { deadlineMs: 600_000 } },
    });
    const { reader, meter } = metered();
    instrument(h.client, { meter });
    const queued = await Promise.all(
      ['q1', 'q2'].map((key) => h.client.enqueue({ method: 'POST', url: '/payments', key, json: {} })),
    );
    expect((await read(reader))['oncely.operations.pending']).toEqual({ '': 2 });

    // Back online into an outage: the budget runs dry and the gate holds them.
    h.server.setOutage({ status: 503 });
    online = true;
    for (const fn of wake) fn();
    await h.rt.run(new Promise<void>((resolve) => h.client.on('held', () => resolve())));
    expect((await read(reader))['oncely.operations.held']?.['127.0.0.1']).toBeGreaterThanOrEqual(1);

    h.server.setOutage(undefined);
    await h.rt.run(Promise.all(queued.map((q) => q.settled)));
    const after = await read(reader);
    expect(after['oncely.operations.held']).toEqual({ '127.0.0.1': 0 });
    expect(after['oncely.operations.pending']).toEqual({ '': 0 });
    expect(after['oncely.operations']).toEqual({ succeeded: 2 });
  });
});
