/**
 * The checkout page (bundled by server.ts into /app.js).
 *
 * An order gets its idempotency key when it opens, derived from the order
 * (`deriveKey`), and every click on "Pay" enqueues the payment with that
 * key: a double click, a click after a reload or a click on a paid order
 * are the same operation, never a second charge. "New order" opens the
 * next one, with its own key.
 *
 * Everything on the right is drawn from the client: the timeline from
 * `client.subscribe()` snapshots (and `client.get(key)` for each attempt),
 * the ledger from the reference server (`/control/ledger`).
 *
 * "Offline" hands the client a `navigator` whose `onLine` is false while
 * the switch is on (and forwards the browser's own `online`/`offline`), so
 * the client behaves exactly as on a real network loss: operations are
 * written ahead and wait, no attempt is made or counted.
 */
import {
  type AttemptClass,
  type BrowserEnv,
  createBrowserClient,
  deriveKey,
  type KeyValueStorage,
  type NavigatorLike,
  type OperationRecord,
  type OperationState,
  type OperationView,
  type Outcome,
  type QueueSnapshot,
} from 'oncely/browser';
import { DEMO_POLICY, WORKER_OWNER_PREFIX } from './policy.js';
import {
  type DemoConfig,
  FAILURES,
  type FailRequest,
  isFailureKind,
  type LedgerView,
  MAX_FAILURES,
  PAYMENTS_PATH,
} from './protocol.js';

// ─── The shop ────────────────────────────────────────────────────────────────

interface CartItem {
  sku: string;
  name: string;
  qty: number;
  /** Cents. */
  unit: number;
}

interface Order {
  n: number;
  key: string;
  /** Stamped into the payment's body: the reconcile hook finds the charge by it (policy.ts). */
  reference: string;
  items: readonly CartItem[];
  /** Cents, shipping included. */
  amount: number;
}

const CARTS: readonly (readonly CartItem[])[] = [
  [
    { sku: 'kettle-gooseneck', name: 'Gooseneck kettle', qty: 1, unit: 3900 },
    { sku: 'filters-100', name: 'Paper filters ×100', qty: 1, unit: 650 },
  ],
  [
    { sku: 'beans-ethiopia-250', name: 'Yirgacheffe beans, 250 g', qty: 2, unit: 1300 },
    { sku: 'brush', name: 'Grinder brush', qty: 1, unit: 350 },
  ],
  [{ sku: 'dripper-ceramic', name: 'Ceramic dripper', qty: 1, unit: 2400 }],
  [
    { sku: 'mug-travel', name: 'Travel mug', qty: 1, unit: 1800 },
    { sku: 'beans-colombia-250', name: 'Huila beans, 250 g', qty: 1, unit: 1250 },
  ],
];
const SHIPPING = 490;

const money = new Intl.NumberFormat('en-IE', { style: 'currency', currency: 'EUR' });
const euros = (cents: number): string => money.format(cents / 100);
const orderLabel = (n: number): string => `#${1000 + n}`;
const short = (key: string): string => `${key.slice(0, 8)}…`;

// ─── DOM ─────────────────────────────────────────────────────────────────────

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

type Child = Node | string | undefined | false;

function h(tag: string, attributes: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
  for (const child of children) if (child !== undefined && child !== false) element.append(child);
  return element;
}

const ui = {
  netPill: byId('net-pill'),
  leaderPill: byId('leader-pill'),
  orderNumber: byId('order-number'),
  newOrder: byId<HTMLButtonElement>('new-order'),
  items: byId('items'),
  total: byId('total'),
  pay: byId<HTMLButtonElement>('pay'),
  orderKey: byId('order-key'),
  clicks: byId('clicks'),
  charges: byId('charges'),
  orderStatus: byId('order-status'),
  offline: byId<HTMLInputElement>('offline'),
  failForm: byId<HTMLFormElement>('fail-form'),
  failCount: byId<HTMLInputElement>('fail-count'),
  failKind: byId<HTMLSelectElement>('fail-kind'),
  failArm: byId<HTMLButtonElement>('fail-arm'),
  forceUnknown: byId<HTMLButtonElement>('force-unknown'),
  armed: byId('armed'),
  counts: byId('counts'),
  ops: byId('ops'),
  opsEmpty: byId('ops-empty'),
  log: byId('log'),
  ledger: byId('ledger'),
  ledgerSummary: byId('ledger-summary'),
};

// ─── State ───────────────────────────────────────────────────────────────────

const started = performance.now();
let current: Order | undefined;
let latest: QueueSnapshot | undefined;
let ledger: LedgerView | undefined;
let ledgerReachable = true;
/** key → "#1003", from our orders and from `meta.order` of stored operations. */
const labels = new Map<string, string>();
const clicks = new Map<string, number>();
/** Clicks whose `settled` has resolved, per key. */
const answered = new Map<string, number>();
/** What the last answer for a key said (a click on Pay, or a retry). */
const answers = new Map<string, { state: OperationState; text: string }>();
const views = new Map<string, OperationView>();
const records = new Map<string, OperationRecord>();
const reads = new Map<string, number>();

interface LogLine {
  at: number;
  kind: 'op' | 'click' | 'lab';
  who: string;
  text: string;
}
const lines: LogLine[] = [];
const MAX_LINES = 120;

function log(kind: LogLine['kind'], who: string, text: string): void {
  lines.unshift({ at: performance.now() - started, kind, who, text });
  lines.length = Math.min(lines.length, MAX_LINES);
  renderLog();
}

// ─── Start-up ────────────────────────────────────────────────────────────────

const config = (await (await fetch('/config.json', { cache: 'no-store' })).json()) as DemoConfig;
/** One database per run of the demo server: keys and ledger start fresh with it. */
const database = `oncely-checkout-${config.run}`;

/** The tab's session survives reloads: the order (and so its key) and the lab's offline switch. */
interface Session {
  id: string;
  order: number;
  offline: boolean;
}
const SESSION_ITEM = `oncely-checkout:${config.run}`;
const session = loadSession();
let simulatedOffline = session.offline;

function loadSession(): Session {
  try {
    const saved = JSON.parse(sessionStorage.getItem(SESSION_ITEM) ?? 'null') as Partial<Session> | null;
    if (typeof saved?.id === 'string' && typeof saved.order === 'number') {
      return { id: saved.id, order: saved.order, offline: saved.offline === true };
    }
  } catch {
    // A fresh session.
  }
  return { id: crypto.randomUUID().slice(0, 8), order: 1, offline: false };
}

function saveSession(): void {
  try {
    sessionStorage.setItem(SESSION_ITEM, JSON.stringify(session));
  } catch {
    // Storage disabled: the order is forgotten on reload; its payment is not (it is in IndexedDB).
  }
}

function safeLocalStorage(): KeyValueStorage | undefined {
  try {
    return localStorage;
  } catch {
    return undefined;
  }
}

// The browser's own online/offline events reach the client through `network`, plus our switch's.
const network = new EventTarget();
for (const type of ['online', 'offline']) {
  window.addEventListener(type, () => {
    network.dispatchEvent(new Event(type));
    render();
  });
}

/** `?sw=1`: a service worker drains the queue too, when the browser wakes it (even with the tab closed). */
const withWorker = new URLSearchParams(location.search).get('sw') === '1' && 'serviceWorker' in navigator;

const env: BrowserEnv = {
  navigator: {
    get onLine() {
      return navigator.onLine && !simulatedOffline;
    },
    locks: navigator.locks,
    storage: navigator.storage,
    // Background Sync goes through it: only with the worker. (TypeScript's DOM types have no `registration.sync`.)
    serviceWorker: withWorker ? (navigator.serviceWorker as NavigatorLike['serviceWorker']) : undefined,
  },
  window: network,
  document,
  localStorage: safeLocalStorage(),
  BroadcastChannel,
  indexedDB,
};

if (withWorker) {
  const script = `/sw.js?${new URLSearchParams({ api: config.api, db: database })}`;
  navigator.serviceWorker.register(script).catch((error: unknown) => console.warn('service worker:', error));
}

const client = createBrowserClient({
  baseUrl: config.api,
  database,
  env,
  // With the worker: an operation that cannot go out now registers a Background Sync for it.
  backgroundSync: withWorker,
  // Short timings so that everything on the page happens within seconds.
  drainIntervalMs: 1_000,
  settlePollMs: 250,
  recheckMs: 500,
  policy: DEMO_POLICY,
});
client.on('background:error', ({ during, error }) => console.warn(`oncely (${during}):`, error));
// How many times the drainer looked for work: while offline each pass finds nothing to send.
let drainPasses = 0;
client.on('drain:pass', () => {
  document.body.dataset.drainPasses = String(++drainPasses);
});

let firstSnapshot = true;
client.subscribe((snapshot) => {
  latest = snapshot;
  for (const view of snapshot.operations) {
    const before = views.get(view.key);
    const order = view.meta?.order;
    if (typeof order === 'number') labels.set(view.key, orderLabel(order));
    const text = describeChange(before, view, firstSnapshot);
    if (text !== undefined) log('op', labelOf(view.key), text);
    views.set(view.key, view);
    if (before === undefined || JSON.stringify(before) !== JSON.stringify(view)) void readRecord(view.key);
  }
  firstSnapshot = false;
  render();
  void refreshLedger();
});

/** The full record (every attempt, the stored result) of an operation the snapshot says changed. */
async function readRecord(key: string): Promise<void> {
  const ticket = (reads.get(key) ?? 0) + 1;
  reads.set(key, ticket);
  const record = await client.get(key);
  if (reads.get(key) !== ticket || record === undefined) return;
  records.set(key, record);
  renderOps();
}

const labelOf = (key: string): string => labels.get(key) ?? short(key);

const CLASS_TEXT: Record<AttemptClass, string> = {
  completed: 'completed',
  not_sent: 'not sent',
  ambiguous: 'ambiguous: no answer, may have been charged',
  retryable: 'retryable',
  in_progress: 'still in progress on the server',
  correctable: 'refused (fix and retry)',
  permanent: 'refused',
};

function attemptText(attempt: NonNullable<OperationView['lastAttempt']>): string {
  if (attempt.endedAt === undefined) return `attempt ${attempt.n} on the wire${attempt.n > 1 ? ', same key' : ''}`;
  const status = attempt.status === undefined ? '' : ` ${attempt.status}`;
  return `attempt ${attempt.n} ← ${attempt.class === undefined ? 'ended' : CLASS_TEXT[attempt.class]}${status}`;
}

/** One line for the log: what changed between two snapshots of an operation. */
function describeChange(before: OperationView | undefined, view: OperationView, initial: boolean): string | undefined {
  const parts: string[] = [];
  if (before === undefined) {
    parts.push(initial ? `found in IndexedDB: ${view.state}` : 'written ahead to IndexedDB');
    if (!initial && view.state === 'pending' && view.tries === 0 && latest?.online === false) {
      parts.push('waiting for the network');
    }
  }
  const now = view.lastAttempt;
  const then = before?.lastAttempt;
  const attemptChanged = now !== undefined && (then === undefined || now.n !== then.n || now.endedAt !== then.endedAt);
  if (attemptChanged && !(before === undefined && initial)) {
    if (then !== undefined && now.n > then.n + 1) parts.push(`attempts ${then.n + 1}–${now.n - 1} ended`);
    else if (then !== undefined && now.n === then.n + 1 && then.endedAt === undefined) {
      parts.push(`attempt ${then.n} ended`);
    }
    parts.push(attemptText(now));
  }
  if (before !== undefined && before.state !== view.state) parts.push(`${before.state} → ${view.state}`);
  else if (before === undefined && !initial && view.state !== 'pending') parts.push(view.state);
  if (view.state === 'pending' && view.tries > 0 && (attemptChanged || before?.state !== 'pending')) {
    const wait = Math.max(0, view.nextAttemptAt - Date.now());
    parts.push(`next attempt in ${wait} ms`);
  }
  if (view.failure !== undefined && before?.failure === undefined) parts.push(view.failure.message);
  return parts.length === 0 ? undefined : parts.join(' · ');
}

// ─── Orders and paying ───────────────────────────────────────────────────────

async function openOrder(n: number): Promise<Order> {
  const items = CARTS[(n - 1) % CARTS.length] ?? CARTS[0]!;
  const amount = items.reduce((sum, item) => sum + item.qty * item.unit, SHIPPING);
  // Derived from the order, so the same order always maps to the same key (a reload included).
  const key = await deriveKey({
    namespace: 'oncely.checkout-web.pay',
    version: 1,
    fields: { session: session.id, order: n },
  });
  labels.set(key, orderLabel(n));
  return { n, key, reference: `${session.id}-${1000 + n}`, items, amount };
}

function paymentBody(order: Order): unknown {
  return {
    order: orderLabel(order.n),
    reference: order.reference,
    amount: order.amount,
    currency: 'EUR',
    items: order.items.map((item) => ({ sku: item.sku, qty: item.qty })),
  };
}

async function pay(): Promise<void> {
  const order = current;
  if (order === undefined) return;
  const click = (clicks.get(order.key) ?? 0) + 1;
  clicks.set(order.key, click);
  log(
    'click',
    orderLabel(order.n),
    click === 1
      ? `Pay clicked → enqueue with key ${short(order.key)}`
      : `Pay clicked again (click ${click}) → the same key ${short(order.key)}: no second payment`,
  );
  renderOrder();
  try {
    const { settled } = await client.enqueue({
      method: 'POST',
      url: PAYMENTS_PATH,
      key: order.key,
      reference: order.reference,
      json: paymentBody(order),
      meta: { order: order.n },
    });
    answers.set(order.key, answerOf(await settled));
  } catch (error) {
    // Refused before anything was written (say, IndexedDB unavailable).
    log('click', orderLabel(order.n), `not enqueued: ${error instanceof Error ? error.message : String(error)}`);
  }
  answered.set(order.key, (answered.get(order.key) ?? 0) + 1);
  renderOrder();
}

function answerOf(outcome: Outcome): { state: OperationState; text: string } {
  if (!outcome.ok || outcome.result === undefined) {
    return { state: outcome.state, text: outcome.error?.message ?? `Ended ${outcome.state}` };
  }
  const data = outcome.result.data as { id?: unknown } | undefined;
  const charge = typeof data?.id === 'string' ? `charge ${data.id}` : 'paid';
  const { attempts, notSent, fromStore, replayed, reconciled } = outcome.result;
  const how = reconciled
    ? `every answer was lost; the reconcile hook found the charge by its reference ${outcome.record?.reference}`
    : fromStore
      ? 'answered from IndexedDB, no request sent'
      : replayed
        ? 'the server replayed its stored answer'
        : attemptsText(attempts, notSent);
  return { state: 'succeeded', text: `Paid ✓ ${charge} (${how})` };
}

async function startNewOrder(): Promise<void> {
  ui.newOrder.disabled = true;
  ui.pay.disabled = true;
  session.order += 1;
  saveSession();
  current = await openOrder(session.order);
  log('click', orderLabel(session.order), `new order, key minted: ${short(current.key)}`);
  ui.newOrder.disabled = false;
  ui.pay.disabled = false;
  renderOrder();
}

// ─── The lab ─────────────────────────────────────────────────────────────────

function setSimulatedOffline(on: boolean): void {
  if (simulatedOffline === on) return;
  simulatedOffline = on;
  session.offline = on;
  saveSession();
  // The client re-reads `navigator.onLine` on these, as on the browser's own.
  network.dispatchEvent(new Event(on ? 'offline' : 'online'));
  log('lab', 'network', on ? 'switched offline (simulated)' : 'switched back online');
  render();
}

async function armFailures(request: FailRequest): Promise<void> {
  ui.failArm.disabled = true;
  try {
    const response = await fetch('/control/fail', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    const body = (await response.json()) as LedgerView | { error: string };
    if (!response.ok || 'error' in body) throw new Error('error' in body ? body.error : `HTTP ${response.status}`);
    ledger = body;
    log('lab', 'server', `armed: the next ${request.count} payment response(s) → ${FAILURES[request.kind]}`);
  } catch (error) {
    log('lab', 'server', `could not arm failures: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    ui.failArm.disabled = false;
    renderLedger();
  }
}

let ledgerReading: Promise<void> | undefined;
let ledgerAgain = false;

/** Reads the server's ledger; calls made while a read runs share one more read. */
function refreshLedger(): Promise<void> {
  if (ledgerReading !== undefined) {
    ledgerAgain = true;
    return ledgerReading;
  }
  ledgerReading = (async () => {
    do {
      ledgerAgain = false;
      // The browser knows it is offline: do not knock on a closed door.
      if (!navigator.onLine) {
        ledgerReachable = false;
        break;
      }
      try {
        const response = await fetch('/control/ledger', { cache: 'no-store' });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        ledger = (await response.json()) as LedgerView;
        ledgerReachable = true;
      } catch {
        ledgerReachable = false;
      }
    } while (ledgerAgain);
    renderLedger();
    renderOrder();
  })().finally(() => {
    ledgerReading = undefined;
  });
  return ledgerReading;
}

// ─── Rendering ───────────────────────────────────────────────────────────────

function render(): void {
  renderNetwork();
  renderOrder();
  renderOps();
}

function renderNetwork(): void {
  let state: string;
  let text: string;
  if (!navigator.onLine) [state, text] = ['offline', 'offline (the browser)'];
  else if (simulatedOffline) [state, text] = ['offline', 'offline (simulated)'];
  else if (latest !== undefined && !latest.online)
    [state, text] = ['paused', 'network unreachable: paused, rechecking'];
  else [state, text] = ['online', 'online'];
  ui.netPill.dataset.state = state;
  ui.netPill.textContent = text;
  ui.offline.checked = simulatedOffline;
  if (latest !== undefined) {
    ui.leaderPill.dataset.state = latest.leader ? 'leader' : 'follower';
    ui.leaderPill.textContent = latest.leader
      ? `this tab sends (${latest.mode === 'locks' ? 'Web Locks' : 'leases'})`
      : 'another tab sends; this one waits';
  }
}

const STATE_TEXT: Record<OperationState, string> = {
  pending: 'pending',
  in_flight: 'in flight',
  succeeded: 'succeeded',
  blocked: 'blocked',
  failed: 'failed',
  unknown: 'unknown',
};

function orderStatus(order: Order, view: OperationView | undefined): { tone: string; text: string } {
  const answer = answers.get(order.key);
  const said = answer !== undefined && answer.state === view?.state ? answer.text : undefined;
  if (view === undefined) {
    return { tone: 'idle', text: 'Not paid yet. The key is minted; Pay writes the payment ahead, then sends it.' };
  }
  switch (view.state) {
    case 'succeeded':
      return { tone: 'good', text: said ?? 'Paid ✓' };
    case 'pending':
      if (view.tries === 0 && latest?.online === false) {
        return { tone: 'wait', text: 'Written ahead, waiting for the network. Nothing has been sent.' };
      }
      if (view.lastAttempt !== undefined) {
        return { tone: 'wait', text: `Retrying with the same key (${attemptText(view.lastAttempt)})…` };
      }
      return { tone: 'wait', text: 'Written ahead, about to send…' };
    case 'in_flight':
      return {
        tone: 'wait',
        text: `Sending: ${view.lastAttempt === undefined ? 'claimed' : attemptText(view.lastAttempt)}`,
      };
    case 'unknown':
      return {
        tone: 'bad',
        text: 'May have been charged, and the client stopped trying. Reconcile it, or retry it with the same key, in the timeline.',
      };
    default:
      return { tone: 'bad', text: said ?? view.failure?.message ?? STATE_TEXT[view.state] };
  }
}

function renderOrder(): void {
  const order = current;
  if (order === undefined) return;
  const view = views.get(order.key);
  ui.orderNumber.textContent = orderLabel(order.n);
  ui.items.replaceChildren(
    ...order.items.map((item) =>
      h(
        'li',
        {},
        h('span', {}, item.name, item.qty > 1 ? h('span', { class: 'qty' }, ` × ${item.qty}`) : undefined),
        h('span', {}, euros(item.qty * item.unit)),
      ),
    ),
    h('li', {}, h('span', { class: 'qty' }, 'Shipping'), h('span', {}, euros(SHIPPING))),
  );
  ui.total.textContent = euros(order.amount);
  ui.pay.dataset.state = view?.state ?? 'new';
  ui.pay.textContent = view?.state === 'succeeded' ? `Paid ✓ ${euros(order.amount)}` : `Pay ${euros(order.amount)}`;
  ui.orderKey.textContent = order.key;
  ui.orderKey.dataset.key = order.key;
  ui.clicks.textContent = String(clicks.get(order.key) ?? 0);
  const charges = ledger?.keys.find((row) => row.key === order.key)?.effects ?? 0;
  ui.charges.textContent = String(charges);
  ui.charges.dataset.charges = String(charges);
  const status = orderStatus(order, view);
  ui.orderStatus.dataset.tone = status.tone;
  ui.orderStatus.dataset.answered = String(answered.get(order.key) ?? 0);
  ui.orderStatus.textContent = status.text;
}

/** "2 attempts, 3 not sent": attempts that may have reached the server, then the tries that never left. */
function attemptsText(attempts: number, notSent: number): string {
  const sent = `${attempts} attempt${attempts === 1 ? '' : 's'}`;
  return notSent === 0 ? sent : `${sent}, ${notSent} not sent`;
}

function attemptChips(view: OperationView): HTMLElement[] {
  const record = records.get(view.key);
  const attempts =
    record?.attempts.map((a) => ({
      n: a.n,
      class: a.class,
      status: a.status,
      error: a.error,
      sent: a.sent,
      byWorker: a.owner.startsWith(WORKER_OWNER_PREFIX),
    })) ??
    (view.lastAttempt === undefined ? [] : [{ ...view.lastAttempt, error: undefined, sent: 'maybe', byWorker: false }]);
  return attempts.map((a) => {
    const cls = a.class ?? 'on-the-wire';
    const by = a.byWorker ? ' · sent by the service worker' : '';
    const text = `${a.n} ${a.class === undefined ? 'on the wire' : a.class.replace('_', ' ')}${a.status === undefined ? '' : ` ${a.status}`}${by}`;
    const attributes = {
      class: 'attempt',
      'data-class': cls,
      'data-n': String(a.n),
      'data-by': a.byWorker ? 'worker' : 'page',
    };
    return h('span', { ...attributes, title: a.error }, text);
  });
}

function renderOps(): void {
  const snapshot = latest;
  if (snapshot === undefined) return;
  ui.counts.replaceChildren(
    ...Object.entries(snapshot.counts)
      .filter(([, count]) => count > 0)
      .map(([state, count]) =>
        h('span', { class: 'badge', 'data-state': state }, `${count} ${STATE_TEXT[state as OperationState]}`),
      ),
  );
  ui.opsEmpty.hidden = snapshot.operations.length > 0;
  const waiting = !snapshot.online;
  ui.ops.replaceChildren(
    ...[...snapshot.operations].reverse().map((view) => {
      const record = records.get(view.key);
      const retry =
        view.state === 'unknown' || view.state === 'blocked'
          ? h('button', { type: 'button', class: 'mini', 'data-retry': view.key }, 'Retry, same key')
          : undefined;
      const reconcile =
        view.state === 'unknown'
          ? h('button', { type: 'button', class: 'mini', 'data-reconcile': view.key }, 'Reconcile')
          : undefined;
      return h(
        'li',
        {
          class: 'op',
          'data-op-key': view.key,
          'data-state': view.state,
          'data-attempts': String(view.attempts),
          'data-tries': String(view.tries),
        },
        h('span', { class: 'op-label' }, labelOf(view.key)),
        h('code', { class: 'op-key', title: view.key }, view.key),
        h(
          'span',
          { class: 'op-side' },
          reconcile,
          retry,
          h('span', { class: 'badge', 'data-state': view.state }, STATE_TEXT[view.state]),
        ),
        h(
          'div',
          { class: 'op-meta' },
          // What the server saw; the chips below number every try, unsent ones too.
          h('span', {}, attemptsText(view.attempts, view.notSent)),
          (clicks.get(view.key) ?? 0) > 1
            ? h('span', { class: 'clicks' }, `${clicks.get(view.key)} clicks on Pay, one operation`)
            : undefined,
          ...attemptChips(view),
          record?.result?.replayed === true ? h('span', { class: 'tag' }, 'replayed by the server') : undefined,
          record?.result?.reconciled === true
            ? h(
                'span',
                { class: 'tag', 'data-reconciled': 'true' },
                `reconciled by its hook (reference ${record.reference})`,
              )
            : undefined,
          view.state === 'pending' && view.tries === 0 && waiting
            ? h('span', {}, 'waiting for the network')
            : undefined,
          view.failure === undefined ? undefined : h('span', {}, view.failure.remediation),
        ),
      );
    }),
  );
}

function renderLog(): void {
  ui.log.replaceChildren(
    ...lines.map((line) =>
      h(
        'li',
        { class: 'entry', 'data-kind': line.kind },
        h('span', { class: 'when' }, `+${(line.at / 1000).toFixed(2)}s`),
        h('span', { class: 'who' }, line.who),
        h('span', { class: 'text' }, line.text),
      ),
    ),
  );
}

function renderLedger(): void {
  const view = ledger;
  if (view === undefined) {
    ui.ledgerSummary.textContent = ledgerReachable ? 'Waiting for the server…' : 'The demo server is unreachable.';
    return;
  }
  ui.ledger.replaceChildren(
    ...view.keys.map((row) =>
      h(
        'tr',
        { 'data-ledger-key': row.key, 'data-effects': String(row.effects) },
        h('td', {}, labels.get(row.key) ?? '—'),
        h('td', { class: 'key', title: row.key }, h('code', {}, row.key)),
        h(
          'td',
          {},
          ...row.requests.map((r) =>
            h(
              'span',
              { class: 'outcome', 'data-outcome': r.outcome, 'data-fault': r.fault },
              `${r.outcome}${r.status === undefined ? '' : ` ${r.status}`}${r.fault === undefined ? '' : ` · ${r.fault}`}`,
            ),
          ),
        ),
        h(
          'td',
          { class: `num effects${row.effects > 1 ? ' twice' : ''}`, 'data-effects': String(row.effects) },
          `${row.effects}${row.effects === 1 ? ' ✓' : row.effects > 1 ? ' ✘' : ''}`,
        ),
      ),
    ),
  );
  const charged = view.keys.filter((row) => row.effects > 0).length;
  const twice = view.keys.filter((row) => row.effects > 1).length;
  const summary = `${view.keys.length} key(s) · ${view.requests} request(s) reached the server · ${view.totalEffects} charge(s)`;
  const verdict =
    twice > 0 ? ` ✘ ${twice} key(s) charged more than once` : charged > 0 ? ' — every key charged exactly once ✓' : '';
  ui.ledgerSummary.dataset.ok = twice > 0 ? 'false' : charged > 0 ? 'true' : '';
  ui.ledgerSummary.textContent = `${summary}${verdict}${ledgerReachable ? '' : ' (last known: the server is unreachable now)'}`;
  ui.armed.dataset.armed = String(view.armed);
  ui.armed.textContent =
    view.armed === 0
      ? 'Nothing armed: the server answers normally.'
      : `${view.armed} failure(s) armed: the next ${view.armed} payment response(s) will fail.`;
}

// ─── Wiring ──────────────────────────────────────────────────────────────────

ui.failKind.replaceChildren(...Object.entries(FAILURES).map(([kind, text]) => h('option', { value: kind }, text)));
ui.failCount.max = String(MAX_FAILURES);
ui.pay.addEventListener('click', () => void pay());
ui.newOrder.addEventListener('click', () => void startNewOrder());
ui.offline.addEventListener('change', () => setSimulatedOffline(ui.offline.checked));
ui.failForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const kind = ui.failKind.value;
  const count = Math.min(MAX_FAILURES, Math.max(1, Math.trunc(Number(ui.failCount.value)) || 1));
  if (isFailureKind(kind)) void armFailures({ kind, count });
});
ui.forceUnknown.addEventListener('click', () => void armFailures({ kind: 'unknown', count: 1 }));
client.on('reconciled', ({ key, by, verdict, state, error }) => {
  const who = by === 'hook' ? 'reconcile hook (ledger by reference)' : 'settle';
  log('op', labelOf(key), `${who}: ${verdict.replace('_', ' ')}${error === undefined ? '' : ` (${error})`} → ${state}`);
});
ui.ops.addEventListener('click', (event) => {
  const asked = event.target instanceof Element ? event.target.closest<HTMLElement>('[data-reconcile]') : null;
  const reconcileKey = asked?.dataset.reconcile;
  if (reconcileKey !== undefined) {
    log('click', labelOf(reconcileKey), 'reconcile: ask the ledger by reference');
    client.reconcile(reconcileKey).then(
      (outcome) => {
        answers.set(reconcileKey, answerOf(outcome));
        renderOrder();
      },
      (error: unknown) => log('click', labelOf(reconcileKey), `reconcile refused: ${(error as Error).message}`),
    );
    return;
  }
  const target = event.target instanceof Element ? event.target.closest<HTMLElement>('[data-retry]') : null;
  const key = target?.dataset.retry;
  if (key === undefined) return;
  log('click', labelOf(key), 'retry with the same key');
  client.retry(key).then(
    (outcome) => {
      answers.set(key, answerOf(outcome));
      renderOrder();
    },
    (error: unknown) =>
      log('click', labelOf(key), `retry refused: ${error instanceof Error ? error.message : String(error)}`),
  );
});

/** Databases of earlier runs of the demo server: their keys and API are gone. */
async function forgetEarlierRuns(): Promise<void> {
  if (typeof indexedDB.databases !== 'function') return;
  for (const { name } of await indexedDB.databases()) {
    if (name?.startsWith('oncely-checkout-') && name !== database) indexedDB.deleteDatabase(name);
  }
}

current = await openOrder(session.order);
saveSession();
ui.newOrder.disabled = false;
ui.pay.disabled = false;
render();
void refreshLedger();
setInterval(() => void refreshLedger(), 500);
void client.ready.then(() => forgetEarlierRuns().catch(() => undefined));
document.body.dataset.ready = 'true';
