/**
 * Page script for offline-queue.browser.test.ts: a tiny "app" that starts a
 * browser client at load, like a real app would (so a reload or a new tab
 * resumes on its own), configured from the query string, and exposes
 * `window.t` for the test to drive with `page.evaluate`.
 *
 * Query: api (reference server URL), db (database name), concurrency,
 * locks=0 (leases only), persist=1, auth=1 (credentials per attempt +
 * refresh on 401), user (default u1), lease (leaseMs).
 */
import {
  type BrowserClient,
  createBrowserClient,
  type OncelyRequest,
  type Outcome,
  type QueueSnapshot,
  type WipeReport,
} from '../../src/browser.js';

export interface AttemptSeen {
  key: string;
  attempt: number;
  owner: string;
}

export interface OutcomeSummary {
  key: string;
  state: string;
  ok: boolean;
  status: number | undefined;
  replayed: boolean | undefined;
  error: string | undefined;
  attempts: Array<{ n: number; class: string | undefined; status: number | undefined; sent: string; owner: string }>;
}

export interface PageStatus {
  owner: string;
  leader: boolean;
  mode: string;
  online: boolean;
  persisted: boolean | undefined;
  wiped: WipeReport | undefined;
  persistedEvents: boolean[];
  wipedEvents: WipeReport[];
  refreshes: number;
  headerCalls: number;
  /** Drain passes this tab made (`drain:pass` events). */
  drainPasses: number;
}

export interface TestPage {
  status(): PageStatus;
  /** Enqueues and returns the key; `settled(key)` waits for the outcome. */
  enqueue(request: PageRequest): Promise<string>;
  enqueueMany(requests: PageRequest[]): Promise<string[]>;
  /** Starts a `send` without waiting (its result is kept for `settled`). Resolves once it is written ahead. */
  startSend(request: PageRequest): Promise<void>;
  settled(keys: string[]): Promise<OutcomeSummary[]>;
  get(key: string): Promise<OutcomeSummary | undefined>;
  attempts(): AttemptSeen[];
  latest(): QueueSnapshot | undefined;
  clear(): Promise<{ removed: string[]; inFlight: string[] }>;
  close(): Promise<void>;
  deleteDatabase(): Promise<void>;
}

/** A request as the test passes it (serialisable). */
export interface PageRequest {
  url: string;
  key?: string;
  json?: unknown;
  scope?: string;
  meta?: Record<string, unknown>;
}

declare global {
  interface Window {
    t?: TestPage;
  }
}

const params = new URLSearchParams(location.search);
const api = params.get('api');
const database = params.get('db') ?? 'oncely-test';
const auth = params.get('auth') === '1';
let token = 'stale';
let refreshes = 0;
let headerCalls = 0;
let drainPasses = 0;
const seen: AttemptSeen[] = [];
const persistedEvents: boolean[] = [];
const wipedEvents: WipeReport[] = [];
const outcomes = new Map<string, Promise<Outcome>>();
let latest: QueueSnapshot | undefined;

/** An outcome, or what `get` can say of a stored record (no result or error read out of it). */
function summary(outcome: Outcome | Pick<Outcome, 'key' | 'state' | 'ok' | 'record'>): OutcomeSummary {
  return {
    key: outcome.key,
    state: outcome.state,
    ok: outcome.ok,
    status: 'result' in outcome ? outcome.result?.status : undefined,
    replayed: 'result' in outcome ? outcome.result?.replayed : undefined,
    error:
      'error' in outcome && outcome.error !== undefined ? `${outcome.error.name}: ${outcome.error.message}` : undefined,
    attempts: (outcome.record?.attempts ?? []).map((a) => ({
      n: a.n,
      class: a.class,
      status: a.status,
      sent: a.sent,
      owner: a.owner,
    })),
  };
}

function start(): BrowserClient {
  if (api === null) throw new Error('the page needs ?api=<reference server url>');
  const client = createBrowserClient({
    baseUrl: api,
    database,
    user: () => params.get('user') ?? 'u1',
    concurrency: Number(params.get('concurrency') ?? '4'),
    locks: params.get('locks') !== '0',
    persist: params.get('persist') === '1',
    leaseMs: Number(params.get('lease') ?? '30000'),
    // Tiny delays: browser tests run on the wall clock, so nothing here may wait long.
    drainIntervalMs: 200,
    settlePollMs: 100,
    recheckMs: 300,
    policy: {
      attemptTimeoutMs: 15_000,
      deadlineMs: 120_000,
      backoff: { baseDelayMs: 20, maxDelayMs: 100, multiplier: 2, jitter: 'full' },
      retryAfter: { honor: true, maxRetryAfterMs: 1_000, jitterMs: 10 },
      budget: false,
    },
    ...(auth
      ? {
          headers: (ctx) => {
            headerCalls++;
            const forced = ctx.meta?.token;
            return { authorization: `Bearer ${typeof forced === 'string' ? forced : token}` };
          },
          onUnauthorized: async () => {
            refreshes++;
            token = 'fresh';
          },
        }
      : {}),
  });
  client.on('attempt:started', (e) => seen.push({ key: e.key, attempt: e.attempt, owner: client.owner }));
  client.on('storage:persisted', (e) => persistedEvents.push(e.persisted));
  client.on('store:wiped', (report) => wipedEvents.push(report));
  client.on('drain:pass', () => {
    drainPasses++;
  });
  client.subscribe((snapshot) => {
    latest = snapshot;
  });
  return client;
}

const client = start();

/** Every request of these tests is a write: a `POST` (oncely, like fetch, defaults to `GET`). */
function toRequest(request: PageRequest): OncelyRequest {
  return { method: 'POST', ...request };
}

async function settledSummary(key: string): Promise<OutcomeSummary> {
  const outcome = outcomes.get(key);
  if (outcome === undefined) throw new Error(`no operation ${key} started on this page`);
  return summary(await outcome);
}

window.t = {
  status() {
    const s = client.status();
    return {
      owner: client.owner,
      leader: s.leader,
      mode: s.mode,
      online: s.online,
      persisted: s.storage.persisted,
      wiped: s.storage.wiped,
      persistedEvents,
      wipedEvents,
      refreshes,
      headerCalls,
      drainPasses,
    };
  },
  async enqueue(request) {
    const { key, settled } = await client.enqueue(toRequest(request));
    outcomes.set(key, settled);
    return key;
  },
  async enqueueMany(requests) {
    return Promise.all(requests.map((r) => window.t?.enqueue(r) ?? Promise.reject(new Error('no page'))));
  },
  async startSend(request) {
    const key = request.key ?? crypto.randomUUID();
    const settled = client.send({ ...toRequest(request), key }).then(
      async (result) => {
        const record = await client.get(key);
        return { key, state: 'succeeded', ok: true, result, record } as Outcome;
      },
      async (error: Error) =>
        ({
          key,
          state: (await client.get(key))?.state ?? 'pending',
          ok: false,
          error,
          record: await client.get(key),
        }) as Outcome,
    );
    outcomes.set(key, settled);
    // Resolve once the operation is written ahead.
    for (;;) {
      if ((await client.get(key)) !== undefined) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  },
  settled: (keys) => Promise.all(keys.map(settledSummary)),
  async get(key) {
    const record = await client.get(key);
    if (record === undefined) return undefined;
    return summary({ key, state: record.state, ok: record.state === 'succeeded', record });
  },
  attempts: () => [...seen],
  latest: () => latest,
  async clear() {
    const result = await client.clear();
    return { removed: result.removed, inFlight: result.inFlight };
  },
  close: () => client.close(),
  deleteDatabase: () =>
    new Promise<void>((resolve, reject) => {
      const request = indexedDB.deleteDatabase(database);
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error);
    }),
};
