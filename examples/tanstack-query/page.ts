/**
 * The demo page: React with `@tanstack/react-query`, paying through
 * `oncely/tanstack-query` (plain `createElement`, no JSX build step).
 *
 * - Pay: `useMutation(mutationOptions(client, …))`. The key comes from the
 *   order, so a second click, or a click after a reload, is the same
 *   payment.
 * - Outbox: `useQuery(outboxQueryOptions(client))`, live from IndexedDB
 *   (and other tabs), offline included.
 * - Receipt: a handler registered for `['pay']` with
 *   `createMutationHandlers`, created with the client at start-up: it runs
 *   for a payment queued before a reload, when the click's closures are gone.
 * - "Offline" hands the client a `navigator` whose `onLine` is false while
 *   the switch is on (kept across reloads in sessionStorage), and forwards
 *   the browser's own `online`/`offline` events.
 */
import { QueryClient, QueryClientProvider, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type BrowserEnv, createBrowserClient, type KeyValueStorage } from 'oncely/browser';
import { createMutationHandlers, mutationOptions, outboxQueryOptions } from 'oncely/tanstack-query';
import { createElement as h, type ReactNode, useEffect, useSyncExternalStore } from 'react';
import { createRoot } from 'react-dom/client';
import { type DemoConfig, type LedgerView, PAYMENTS_PATH } from './protocol.js';

const config = (await (await fetch('/config.json', { cache: 'no-store' })).json()) as DemoConfig;

/** The tab's session survives reloads: the order (and so its key) and the offline switch. */
interface Session {
  orderId: string;
  offline: boolean;
}
const SESSION_ITEM = `oncely-tanstack:${config.run}`;
const session: Session = loadSession();

function loadSession(): Session {
  try {
    const saved = JSON.parse(sessionStorage.getItem(SESSION_ITEM) ?? 'null') as Partial<Session> | null;
    if (typeof saved?.orderId === 'string') return { orderId: saved.orderId, offline: saved.offline === true };
  } catch {
    // A fresh session.
  }
  return { orderId: crypto.randomUUID().slice(0, 8), offline: false };
}

function saveSession(): void {
  try {
    sessionStorage.setItem(SESSION_ITEM, JSON.stringify(session));
  } catch {
    // Storage disabled: the order is forgotten on reload; its payment is not (it is in IndexedDB).
  }
}
saveSession();

function safeLocalStorage(): KeyValueStorage | undefined {
  try {
    return localStorage;
  } catch {
    return undefined;
  }
}

// The switch and the browser's own events, as one `onLine` for the client and one store for React.
const network = new EventTarget();
const networkListeners = new Set<() => void>();
const isOnline = (): boolean => navigator.onLine && !session.offline;
function networkChanged(type: 'online' | 'offline'): void {
  network.dispatchEvent(new Event(type));
  for (const fn of [...networkListeners]) fn();
}
for (const type of ['online', 'offline'] as const) window.addEventListener(type, () => networkChanged(type));
function setOffline(on: boolean): void {
  session.offline = on;
  saveSession();
  networkChanged(on ? 'offline' : 'online');
}

const env: BrowserEnv = {
  navigator: {
    get onLine() {
      return isOnline();
    },
    locks: navigator.locks,
    storage: navigator.storage,
  },
  window: network,
  document,
  localStorage: safeLocalStorage(),
  BroadcastChannel,
  indexedDB,
};

const client = createBrowserClient({
  baseUrl: config.api,
  database: `oncely-tanstack-${config.run}`,
  env,
  // Short timings so that everything on the page happens within seconds.
  drainIntervalMs: 1_000,
  settlePollMs: 250,
  recheckMs: 500,
  policy: {
    attemptTimeoutMs: 1_000,
    deadlineMs: 10 * 60_000,
    maxAttempts: 6,
    backoff: { baseDelayMs: 50, maxDelayMs: 800, multiplier: 2, jitter: 'full' },
  },
});

const queryClient = new QueryClient();

interface Order {
  id: string;
  amount: number;
}
interface Receipt {
  key: string;
  amount: number;
}
const order: Order = { id: session.orderId, amount: 4800 };
const paymentKey = (o: Order): string => `pay-${o.id}`;

// Registered with the client, before anything is awaited: the client starts
// sending what a previous page left queued at once.
const handlers = createMutationHandlers(client, { queryClient });
handlers.register<{ amount: number }>(['pay'], {
  onSuccess(result) {
    queryClient.setQueryData<Receipt>(['receipt', result.key], { key: result.key, amount: result.data.amount });
  },
  onSettled(_outcome, { key }) {
    void queryClient.invalidateQueries({ queryKey: ['payment', key] });
  },
});

const pay = mutationOptions(client, {
  method: 'POST',
  url: PAYMENTS_PATH,
  mutationKey: ['pay'],
  key: paymentKey,
  json: (o: Order) => ({ orderId: o.id, amount: o.amount, currency: 'EUR' }),
  meta: (o: Order) => ({ orderId: o.id }),
});

/** The browser's network and the switch, as React state (the switch can flip while the browser is offline). */
function useNetwork(): { online: boolean; switchedOff: boolean } {
  const state = useSyncExternalStore(
    (fn) => {
      networkListeners.add(fn);
      return () => networkListeners.delete(fn);
    },
    () => `${navigator.onLine}:${session.offline}`,
  );
  const [browser, switched] = state.split(':');
  return { online: browser === 'true' && switched === 'false', switchedOff: switched === 'true' };
}

const euros = (cents: number): string => `${(cents / 100).toFixed(2)} €`;

function App(): ReactNode {
  const qc = useQueryClient();
  const { online, switchedOff } = useNetwork();
  const key = paymentKey(order);
  const mutation = useMutation({
    ...pay,
    onSettled: () => qc.invalidateQueries({ queryKey: ['payment', key] }),
  });
  const outbox = useQuery(outboxQueryOptions(client));
  const payment = useQuery({
    queryKey: ['payment', key],
    queryFn: async () => (await client.get(key))?.state ?? 'none',
    networkMode: 'always',
  });
  // The outbox changed: the payment's state may have too.
  const outboxVersion = outbox.dataUpdatedAt;
  useEffect(() => {
    if (outboxVersion > 0) void qc.invalidateQueries({ queryKey: ['payment', key] });
  }, [outboxVersion, qc, key]);
  const receipt = useQuery<Receipt | null>({
    queryKey: ['receipt', key],
    queryFn: () => null,
    staleTime: Number.POSITIVE_INFINITY,
    networkMode: 'always',
  });
  const ledger = useQuery({
    queryKey: ['ledger'],
    queryFn: async () => (await (await fetch('/control/ledger', { cache: 'no-store' })).json()) as LedgerView,
    refetchInterval: 500,
    networkMode: 'always',
  });
  const operations = outbox.data?.operations ?? [];
  const effects = ledger.data?.effects[key] ?? 0;

  return h(
    'main',
    null,
    h('h1', null, 'oncely + TanStack Query'),
    h(
      'p',
      null,
      'Network: ',
      h('span', { id: 'network', className: 'pill', 'data-online': String(online) }, online ? 'online' : 'offline'),
      ' ',
      h(
        'label',
        null,
        h('input', {
          id: 'offline',
          type: 'checkbox',
          checked: switchedOff,
          onChange: (event: { target: { checked: boolean } }) => setOffline(event.target.checked),
        }),
        ' Offline',
      ),
    ),
    h(
      'section',
      null,
      h('h2', null, 'Order'),
      h(
        'p',
        { id: 'order', 'data-key': key },
        `Order ${order.id}: ${euros(order.amount)} (key `,
        h('code', null, key),
        ')',
      ),
      h('button', { id: 'pay', type: 'button', onClick: () => mutation.mutate(order) }, `Pay ${euros(order.amount)}`),
      h(
        'p',
        null,
        'This page’s mutation: ',
        h('span', { id: 'mutation', className: 'pill', 'data-status': mutation.status }, mutation.status),
        ' — payment: ',
        h('span', { id: 'payment', className: 'pill', 'data-state': payment.data ?? 'loading' }, payment.data ?? '…'),
      ),
      h(
        'p',
        { id: 'receipt', 'data-key': receipt.data?.key ?? '' },
        receipt.data ? `Receipt: ${euros(receipt.data.amount)} paid (${receipt.data.key})` : 'No receipt yet.',
      ),
    ),
    h(
      'section',
      null,
      h('h2', null, 'Outbox (oncely, IndexedDB)'),
      h(
        'ul',
        { id: 'outbox', 'data-count': String(operations.length) },
        operations.length === 0
          ? h('li', null, 'Nothing waiting.')
          : operations.map((op) =>
              h(
                'li',
                { key: op.key, 'data-op-key': op.key, 'data-state': op.state },
                `${op.method} ${new URL(op.url).pathname} — ${op.state}, ${op.attempts} attempt(s)`,
              ),
            ),
      ),
    ),
    h(
      'section',
      null,
      h('h2', null, 'Server ledger'),
      h('p', { id: 'ledger', 'data-effects': String(effects) }, `Charges for this order: ${effects}`),
    ),
  );
}

createRoot(document.getElementById('root') as HTMLElement).render(
  h(QueryClientProvider, { client: queryClient }, h(App)),
);
await client.ready;
document.body.dataset.ready = 'true';
