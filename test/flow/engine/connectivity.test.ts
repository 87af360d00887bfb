/**
 * The default connectivity (`navigatorConnectivity`): `navigator.onLine ===
 * false` is the only "offline" it reports, and a client built without a
 * connectivity of its own uses it (no attempt, none counted, while offline).
 */
import { describe, expect, it, vi } from 'vitest';
import { createClient } from '../../../src/client.js';
import { navigatorConnectivity } from '../../../src/flow/engine/connectivity.js';
import { createFakeRuntime } from '../../../src/testing/fake-runtime.js';

describe('navigatorConnectivity', () => {
  it('offline only when navigator.onLine is false; true or missing is "unknown" (try)', () => {
    expect(navigatorConnectivity({ navigator: { onLine: false } }).online()).toBe(false);
    expect(navigatorConnectivity({ navigator: { onLine: true } }).online()).toBe(true);
    expect(navigatorConnectivity({ navigator: {} }).online()).toBe(true);
    expect(navigatorConnectivity({}).online()).toBe(true);
  });

  it('reads the value at each call, not once', () => {
    const scope = { navigator: { onLine: true } };
    const connectivity = navigatorConnectivity(scope);
    scope.navigator.onLine = false;
    expect(connectivity.online()).toBe(false);
  });

  it("onOnline follows the scope's online event, and stops after unsubscribing", () => {
    const scope = new EventTarget();
    const connectivity = navigatorConnectivity(scope as never);
    let woken = 0;
    let other = 0;
    const stop = connectivity.onOnline(() => woken++);
    connectivity.onOnline(() => other++);
    scope.dispatchEvent(new Event('online'));
    stop();
    scope.dispatchEvent(new Event('online'));
    expect([woken, other]).toEqual([1, 2]);
  });
});

describe('a client without a connectivity option', () => {
  it('sends nothing while navigator.onLine is false, and sends once the platform is back online', async () => {
    const rt = createFakeRuntime();
    const platform = new EventTarget();
    const navigator = { onLine: false };
    vi.stubGlobal('navigator', navigator);
    vi.stubGlobal('addEventListener', platform.addEventListener.bind(platform));
    vi.stubGlobal('removeEventListener', platform.removeEventListener.bind(platform));
    let requests = 0;
    const client = createClient({
      baseUrl: 'https://api.example.com',
      runtime: rt,
      fetch: async () => {
        requests++;
        return new Response('{"id":"p1"}', { status: 201, headers: { 'content-type': 'application/json' } });
      },
      policy: { deadlineMs: 3_600_000 },
    });
    const queued = await client.enqueue({ method: 'POST', url: '/payments', key: 'offline-1', json: { amount: 1 } });
    await rt.advance(60_000);
    expect(requests).toBe(0);
    expect((await client.get('offline-1'))?.attempts).toHaveLength(0);
    navigator.onLine = true;
    platform.dispatchEvent(new Event('online'));
    const outcome = await rt.run(queued.settled);
    expect(outcome.ok).toBe(true);
    expect(requests).toBe(1);
    await client.close();
  });
});
