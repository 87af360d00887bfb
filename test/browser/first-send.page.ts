/**
 * Page script for first-send.browser.test.ts: a checkout page as the README
 * shows it, split into chunks as an app's bundler splits it. It creates the
 * browser client at load and pays at once; then, when the test asks, makes
 * a read that sends no key and a payment with `meta` (what loads only for
 * them).
 */
import { createBrowserClient } from '../../src/browser.js';

declare global {
  interface Window {
    firstPayment?: Promise<number>;
    page?: { read(): Promise<number>; payWithMeta(key: string): Promise<number> };
  }
}

const query = new URLSearchParams(location.search);
const client = createBrowserClient({ baseUrl: query.get('api') ?? '', database: query.get('db') ?? 'shop' });

window.firstPayment = client
  .send({ method: 'POST', url: '/payments', key: 'first', json: { amount: 4800, currency: 'EUR' } })
  .then((r) => r.status);
window.page = {
  read: () => client.send({ method: 'GET', url: '/catalog' }).then((r) => r.status),
  payWithMeta: (key) =>
    client
      .send({ method: 'POST', url: '/payments', key, json: { amount: 1 }, meta: { cart: 'c1' } })
      .then((r) => r.status),
};
