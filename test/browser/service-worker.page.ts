/**
 * Page script of service-worker.browser.test.ts: an app page that registers
 * the service worker (service-worker.sw.ts) and queues with the browser
 * client (`backgroundSync: true`), exposing `window.sw` to the test.
 *
 * Query: api, db, budget (the worker's), concurrency, token (the worker's
 * bearer token), timeout (attemptTimeoutMs, both), sw=0 (no worker: the same client alone, for comparisons),
 * observe=1 (no client: only collects the worker's reports, holds no lock).
 */
import {
  type BrowserClient,
  createBrowserClient,
  type OperationRecord,
  type QueueSnapshot,
} from '../../src/browser.js';
import type { DrainReport } from '../../src/service-worker.js';

export interface RecordSummary {
  key: string;
  state: string;
  attempts: Array<{ class: string | undefined; status: number | undefined; owner: string }>;
}

export interface SwPage {
  /** Resolves once the worker is active (registered by this page or before). */
  ready(): Promise<void>;
  online(): boolean;
  owner(): string | undefined;
  enqueueMany(requests: Array<{ url: string; json: unknown; key?: string }>): Promise<string[]>;
  /** The Background Sync tags registered now. */
  syncTags(): Promise<string[]>;
  get(key: string): Promise<RecordSummary | undefined>;
  latest(): QueueSnapshot | undefined;
  /** Asks the worker to drain (a `message`), as an app may do. */
  askWorker(): Promise<void>;
  reports(): DrainReport[];
}

declare global {
  interface Window {
    sw?: SwPage;
  }
}

const params = new URLSearchParams(location.search);
const database = params.get('db') ?? 'oncely-test';
const withWorker = params.get('sw') !== '0';
const observeOnly = params.get('observe') === '1';
const reports: DrainReport[] = [];
new BroadcastChannel('oncely-test:reports').onmessage = (event: MessageEvent) => reports.push(event.data);

if (withWorker && !observeOnly) {
  const script = new URLSearchParams({
    api: params.get('api') ?? '',
    db: database,
    budget: params.get('budget') ?? '20000',
    concurrency: params.get('concurrency') ?? '4',
    token: params.get('token') ?? 'worker',
    timeout: params.get('timeout') ?? '15000',
  });
  void navigator.serviceWorker.register(`/sw.js?${script.toString()}`);
}

let client: BrowserClient | undefined;
let latest: QueueSnapshot | undefined;
if (!observeOnly) {
  client = createBrowserClient({
    baseUrl: params.get('api') ?? '',
    database,
    backgroundSync: withWorker,
    concurrency: Number(params.get('concurrency') ?? '4'),
    drainIntervalMs: 200,
    settlePollMs: 100,
    recheckMs: 300,
    policy: {
      attemptTimeoutMs: Number(params.get('timeout') ?? '15000'),
      deadlineMs: 120_000,
      backoff: { baseDelayMs: 20, maxDelayMs: 100, multiplier: 2, jitter: 'full' },
      retryAfter: { honor: true, maxRetryAfterMs: 1_000, jitterMs: 10 },
      budget: false,
    },
  });
  client.subscribe((snapshot) => {
    latest = snapshot;
  });
}

function summary(record: OperationRecord): RecordSummary {
  return {
    key: record.key,
    state: record.state,
    attempts: record.attempts.map((a) => ({ class: a.class, status: a.status, owner: a.owner })),
  };
}

function needClient(): BrowserClient {
  if (client === undefined) throw new Error('this page was opened with observe=1: no client');
  return client;
}

window.sw = {
  async ready() {
    await navigator.serviceWorker.ready;
  },
  online: () => needClient().status().online,
  owner: () => client?.owner,
  async enqueueMany(requests) {
    const queued = await Promise.all(requests.map((r) => needClient().enqueue({ method: 'POST', ...r })));
    return queued.map((q) => q.key);
  },
  async syncTags() {
    const registration = (await navigator.serviceWorker.ready) as ServiceWorkerRegistration & {
      sync?: { getTags(): Promise<string[]> };
    };
    return (await registration.sync?.getTags()) ?? [];
  },
  async get(key) {
    const record = await needClient().get(key);
    return record === undefined ? undefined : summary(record);
  },
  latest: () => latest,
  async askWorker() {
    (await navigator.serviceWorker.ready).active?.postMessage({ type: 'oncely:drain', database });
  },
  reports: () => [...reports],
};
