/**
 * Reconciling `unknown` operations end to end: a real reference server on
 * 127.0.0.1 whose business handler files each payment under the reference
 * the request carries (the provider's "search by metadata"), a file store,
 * virtual time. Each path of the hook (applied, not applied, unknown, a
 * throw, no answer), the bounded rechecks `resume()` runs, `reconcile(key)`
 * without a hook (a replay inside the key's retention, refused past it),
 * and `settle` (recorded; refused in flight and once final).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createClient,
  type OncelyClient,
  type OncelyEvents,
  type PolicyOptions,
  type ReconcileContext,
} from '../../src/index.js';
import type { FileStore } from '../../src/node.js';
import { createFakeRuntime, type FakeRuntime, type ReferenceServer, startReferenceServer } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore } from '../helpers/machine.js';

interface Setup {
  rt: FakeRuntime;
  server: ReferenceServer;
  store: FileStore;
  client: OncelyClient;
  /** The provider's payments by the reference stamped into their metadata. */
  payments: Map<string, string>;
  /** What the hook was told, call by call. */
  asked: ReconcileContext[];
  reconciled: Array<OncelyEvents['reconciled']>;
  errors: Array<OncelyEvents['error']>;
}

const open: Setup[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) {
    await s.client.close();
    await s.store.close();
    await s.server.close();
  }
  removeTempDirs();
});

const RETENTION_MS = 24 * 3_600_000;

/** `hook` gets the payments the server filed; the rule sends once (`maxAttempts: 1`), so a lost answer ends `unknown`. */
async function setup(
  hook?: (context: ReconcileContext, payments: Map<string, string>) => unknown,
  rule: PolicyOptions = {},
): Promise<Setup> {
  const rt = createFakeRuntime({ seed: 1 });
  const payments = new Map<string, string>();
  const server = await startReferenceServer({
    runtime: rt,
    handle: (req) => {
      const id = `pi_${req.effectNumber}`;
      const reference = (req.body as { metadata?: { reference?: string } } | undefined)?.metadata?.reference;
      if (reference !== undefined) payments.set(reference, id);
      return { status: 201, body: { id, ...(req.body as object) } };
    },
  });
  const store = fileStore({ dir: tempDir(), runtime: rt });
  const asked: ReconcileContext[] = [];
  const endpoint: PolicyOptions = { maxAttempts: 1, ...rule };
  if (hook !== undefined) {
    endpoint.reconcile = (context) => {
      asked.push(context);
      return hook(context, payments) as never;
    };
  }
  const client = createClient({
    baseUrl: server.url,
    runtime: rt,
    fetch: rt.fetch,
    store,
    endpoints: { 'POST /payments': endpoint },
  });
  const s: Setup = { rt, server, store, client, payments, asked, reconciled: [], errors: [] };
  client.on('reconciled', (e) => s.reconciled.push(e));
  client.on('error', (e) => s.errors.push(e));
  open.push(s);
  return s;
}

const pay = (reference: string, key = `key-${reference}`) => ({
  method: 'POST',
  url: '/payments',
  key,
  reference,
  json: { amount: 4800, currency: 'EUR', metadata: { reference } },
});

/** The hook of a provider searched by reference. */
const byReference =
  (missing: false | 'unknown') =>
  ({ reference }: ReconcileContext, payments: Map<string, string>) => {
    const id = reference === undefined ? undefined : payments.get(reference);
    return id === undefined ? { applied: missing } : { applied: true, result: { status: 201, data: { id } } };
  };

describe('the reconcile hook, called when an operation would end unknown', () => {
  it('applied: the answer was lost after the charge, the hook finds it by reference, send resolves reconciled', async () => {
    const s = await setup(byReference('unknown'));
    s.server.script({ kind: 'reset-after-commit' });
    const result = await s.rt.run(s.client.send(pay('order-1')));
    expect(result).toMatchObject({ status: 201, data: { id: 'pi_1' }, reconciled: true, attempts: 1 });
    expect(s.server.ledger.effectCount('key-order-1')).toBe(1);
    const record = await s.client.get('key-order-1');
    expect(record).toMatchObject({ state: 'succeeded', reference: 'order-1', result: { reconciled: true } });
    expect(record?.reconciliation?.history).toEqual([{ at: s.rt.now(), by: 'hook', verdict: 'applied' }]);
    expect(s.asked).toHaveLength(1);
    expect(s.asked[0]).toMatchObject({ key: 'key-order-1', reference: 'order-1', checks: 0, withinKeyRetention: true });
    expect(s.reconciled).toEqual([
      {
        key: 'key-order-1',
        by: 'hook',
        verdict: 'applied',
        state: 'succeeded',
        error: undefined,
        nextCheckAt: undefined,
      },
    ]);
    // A repeat send is answered from the store, without network.
    const again = await s.rt.run(s.client.send(pay('order-1')));
    expect(again).toMatchObject({ fromStore: true, reconciled: true, data: { id: 'pi_1' } });
    expect(s.server.ledger.requestsFor('key-order-1')).toHaveLength(1);
  });

  it('not applied: the connection broke before the charge; failed, not_applied, safe to send anew, discard allowed', async () => {
    const s = await setup(byReference(false));
    s.server.script({ kind: 'reset-before-commit' });
    const error = await s.rt.run(s.client.send(pay('order-2'))).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'operation_failed',
      state: 'failed',
      reason: 'not_applied',
      mayHaveTakenEffect: false,
    });
    expect((error as Error).message).toMatch(/Not applied: the reconcile hook found that it never took effect/);
    expect((error as { remediation: string }).remediation).toMatch(/Safe to send as a new operation/);
    expect(s.server.ledger.effectCount('key-order-2')).toBe(0);
    await s.client.discard('key-order-2');
    expect(await s.client.get('key-order-2')).toBeUndefined();
  });

  it('unknown: stays unknown; resume() rechecks when due, at most maxChecks times, on the injected clock', async () => {
    const s = await setup(() => ({ applied: 'unknown' }), { recheck: { maxChecks: 3, delayMs: 60_000 } });
    s.server.script({ kind: 'reset-before-commit' });
    const error = await s.rt.run(s.client.send(pay('order-3'))).catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'unknown', mayHaveTakenEffect: true });
    const stoppedAt = s.rt.now();
    expect((await s.client.get('key-order-3'))?.reconciliation).toMatchObject({
      checks: 1,
      nextCheckAt: stoppedAt + 60_000,
    });
    // Not due yet: resume() asks nothing.
    await s.rt.run(s.client.resume());
    expect(s.asked).toHaveLength(1);
    await s.rt.advance(60_000);
    await s.rt.run(s.client.resume());
    expect(s.asked).toHaveLength(2);
    expect(s.asked[1]?.checks).toBe(1);
    expect((await s.client.get('key-order-3'))?.reconciliation?.nextCheckAt).toBe(s.rt.now() + 120_000);
    await s.rt.advance(119_999);
    await s.rt.run(s.client.resume());
    expect(s.asked).toHaveLength(2);
    await s.rt.advance(1);
    await s.rt.run(s.client.resume());
    expect(s.asked).toHaveLength(3);
    // maxChecks spent: no check is scheduled, and none is made however long we wait.
    const record = await s.client.get('key-order-3');
    expect(record).toMatchObject({ state: 'unknown', reconciliation: { checks: 3 } });
    expect(record?.reconciliation?.nextCheckAt).toBeUndefined();
    await s.rt.advance(10 * 3_600_000);
    await s.rt.run(s.client.resume());
    expect(s.asked).toHaveLength(3);
    expect(s.server.ledger.requestsFor('key-order-3')).toHaveLength(1);
    // The app can still ask by hand, and the operation can still be settled.
    expect((await s.rt.run(s.client.reconcile('key-order-3'))).state).toBe('unknown');
    expect(s.asked).toHaveLength(4);
  });

  it('a check the loop schedules sooner than the next look at the store is made on time', async () => {
    const s = await setup(() => ({ applied: 'unknown' }), { recheck: { delayMs: 5_000 } });
    // A pass with nothing to check: the next look at the store would be a minute away.
    await s.rt.run(s.client.resume());
    s.server.script({ kind: 'reset-before-commit' });
    await s.rt.run(s.client.send(pay('order-3b'))).catch(() => undefined);
    expect(s.asked).toHaveLength(1);
    await s.rt.advance(5_000);
    await s.rt.run(s.client.resume());
    expect(s.asked).toHaveLength(2);
  });

  it('a throwing hook: unknown, the error reported (event and history), a check scheduled; the next one settles it', async () => {
    let fail = true;
    const s = await setup((context, payments) => {
      if (fail) throw new Error('search API down');
      return byReference('unknown')(context, payments);
    });
    s.server.script({ kind: 'reset-after-commit' });
    const error = await s.rt.run(s.client.send(pay('order-4'))).catch((e: unknown) => e);
    expect(error).toMatchObject({ state: 'unknown' });
    expect(s.errors.map((e) => [e.event, (e.error as Error).message])).toEqual([['reconcile', 'search API down']]);
    const record = await s.client.get('key-order-4');
    expect(record?.reconciliation?.history).toEqual([
      { at: s.rt.now(), by: 'hook', verdict: 'unknown', error: 'reconcile threw: search API down' },
    ]);
    fail = false;
    await s.rt.advance(60_000);
    await s.rt.run(s.client.resume());
    expect(await s.client.get('key-order-4')).toMatchObject({ state: 'succeeded', result: { reconciled: true } });
    expect(s.server.ledger.effectCount('key-order-4')).toBe(1);
  });

  it('a hook that never answers is given up after attemptTimeoutMs: unknown, said why', async () => {
    const s = await setup(() => new Promise(() => undefined), { attemptTimeoutMs: 5_000 });
    s.server.script({ kind: 'reset-before-commit' });
    await s.rt.run(s.client.send(pay('order-5'))).catch(() => undefined);
    const record = await s.client.get('key-order-5');
    expect(record?.state).toBe('unknown');
    expect(record?.reconciliation?.history[0]?.error).toBe('reconcile did not answer within 5000 ms');
  });

  it('an answer that is no verdict counts as unknown and says what it was', async () => {
    const s = await setup(() => ({ applied: 'maybe' }));
    s.server.script({ kind: 'reset-before-commit' });
    await s.rt.run(s.client.send(pay('order-6'))).catch(() => undefined);
    const record = await s.client.get('key-order-6');
    expect(record?.state).toBe('unknown');
    expect(record?.reconciliation?.history[0]?.error).toMatch(/reconcile answered \{"applied":"maybe"\}/);
  });
});

describe('reference and provider ids', () => {
  it('a reference is minted once for a rule with a hook, and the provider id of a 500 reaches the hook', async () => {
    const s = await setup(() => ({ applied: 'unknown' }));
    s.server.script({ kind: 'status', status: 500, body: { id: 'pi_from_500', error: 'internal' } });
    await s.rt.run(s.client.send({ method: 'POST', url: '/payments', key: 'k7', json: { amount: 1 } })).catch(() => 0);
    const record = await s.client.get('k7');
    expect(record?.reference).toMatch(/^[0-9a-f-]{36}$/);
    expect(record?.reference).not.toBe('k7');
    expect(record?.attempts[0]?.providerId).toBe('pi_from_500');
    expect(s.asked[0]).toMatchObject({ reference: record?.reference, providerIds: ['pi_from_500'] });
  });

  it('a custom providerId reads where the provider puts it; none is minted without a hook', async () => {
    const s = await setup(undefined, {
      providerId: (answer) => (answer.data as { error?: { payment_intent?: string } }).error?.payment_intent,
    });
    s.server.script({ kind: 'status', status: 502, body: { error: { payment_intent: 'pi_nested' } } });
    await s.rt.run(s.client.send({ method: 'POST', url: '/payments', key: 'k8', json: { amount: 1 } })).catch(() => 0);
    const record = await s.client.get('k8');
    expect(record?.attempts[0]?.providerId).toBe('pi_nested');
    expect(record?.reference).toBeUndefined();
  });

  it('refuses a bad reference before anything is stored, naming the field', async () => {
    const s = await setup();
    await expect(s.client.send({ ...pay('x'), reference: '' })).rejects.toMatchObject({
      code: 'invalid_request',
      field: 'reference',
    });
    expect(await s.client.list()).toEqual([]);
  });
});

describe('client.reconcile without a hook', () => {
  it('inside the key retention: a replay with the same key settles it (the server answers from its record)', async () => {
    const s = await setup();
    s.server.script({ kind: 'reset-after-commit' });
    await s.rt.run(s.client.send(pay('order-9'))).catch(() => undefined);
    expect((await s.client.get('key-order-9'))?.state).toBe('unknown');
    const outcome = await s.rt.run(s.client.reconcile('key-order-9'));
    expect(outcome).toMatchObject({ ok: true, state: 'succeeded', result: { replayed: true, data: { id: 'pi_1' } } });
    expect(s.server.ledger.effectCount('key-order-9')).toBe(1);
  });

  it('past the key retention: refused, pointing to the reference and settle', async () => {
    const s = await setup();
    s.server.script({ kind: 'reset-after-commit' });
    await s.rt.run(s.client.send(pay('order-10'))).catch(() => undefined);
    await s.rt.advance(RETENTION_MS);
    await expect(s.client.reconcile('key-order-10')).rejects.toMatchObject({
      code: 'invalid_state',
      message: expect.stringMatching(/key retention has ended.*no reconcile hook.*reference order-10.*settle/),
    });
    expect(s.server.ledger.requestsFor('key-order-10')).toHaveLength(1);
  });
});

describe('client.settle (a webhook)', () => {
  it('confirms an unknown operation: succeeded with its result, recorded in the history', async () => {
    const s = await setup();
    s.server.script({ kind: 'reset-after-commit' });
    await s.rt.run(s.client.send(pay('order-11'))).catch(() => undefined);
    const outcome = await s.client.settle('key-order-11', { applied: true, result: { data: { id: 'pi_1' } } });
    expect(outcome).toMatchObject({ ok: true, state: 'succeeded', result: { reconciled: true, data: { id: 'pi_1' } } });
    const record = await s.client.get('key-order-11');
    expect(record?.reconciliation?.history).toEqual([{ at: s.rt.now(), by: 'settle', verdict: 'applied' }]);
    expect(s.reconciled.map((e) => [e.by, e.verdict, e.state])).toEqual([['settle', 'applied', 'succeeded']]);
    // Final now: a second verdict is refused.
    await expect(s.client.settle('key-order-11', { applied: false })).rejects.toMatchObject({
      code: 'invalid_state',
      message: expect.stringMatching(/already final \(succeeded\)/),
    });
  });

  it('refutes one: failed, not_applied', async () => {
    const s = await setup();
    s.server.script({ kind: 'reset-before-commit' });
    await s.rt.run(s.client.send(pay('order-12'))).catch(() => undefined);
    const outcome = await s.client.settle('key-order-12', { applied: false });
    expect(outcome).toMatchObject({
      ok: false,
      state: 'failed',
      error: { reason: 'not_applied', mayHaveTakenEffect: false },
    });
  });

  it('is refused while the operation is in flight, and the operation ends on its own answer', async () => {
    const s = await setup();
    const hold = s.server.hold();
    const { key, settled } = await s.rt.run(s.client.enqueue(pay('order-13')));
    await hold.arrived;
    await expect(s.client.settle(key, { applied: false })).rejects.toMatchObject({
      code: 'invalid_state',
      message: expect.stringMatching(/being driven/),
    });
    // Another process (no loop of its own on it) is refused by the stored state.
    const other = createClient({ baseUrl: s.server.url, runtime: s.rt, fetch: s.rt.fetch, store: s.store });
    await expect(other.settle(key, { applied: false })).rejects.toMatchObject({
      code: 'invalid_state',
      message: expect.stringMatching(/still being driven \(in_flight\)/),
    });
    await other.close();
    hold.release();
    expect(await s.rt.run(settled)).toMatchObject({ ok: true, state: 'succeeded' });
    expect((await s.client.get(key))?.reconciliation).toBeUndefined();
  });

  it('refuses an outcome that is not a verdict, naming the field', async () => {
    const s = await setup();
    await expect(s.client.settle('nope', { applied: 'unknown' } as never)).rejects.toMatchObject({
      code: 'invalid_request',
      field: 'outcome.applied',
    });
    await expect(s.client.settle('nope', { applied: true })).rejects.toMatchObject({ code: 'not_found' });
  });
});
