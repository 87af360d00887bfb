/**
 * The TanStack Query demo's servers, started in-process by `main.ts` and by
 * the browser test: the reference idempotent server (`oncely/testing`, the
 * payment API and its ledger), and a small static server for the page:
 * `index.html`, `styles.css`, `app.js` (`page.ts` bundled with esbuild at
 * start-up, importing `oncely/browser`, `oncely/tanstack-query` and
 * `@tanstack/react-query` like any app), `GET /config.json` and
 * `GET /control/ledger`. Both listen on 127.0.0.1 only.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { type ReferenceServer, startReferenceServer } from 'oncely/testing';
import { bundleForBrowser, pageFiles, startPageServer } from '../web-demo/page-server.js';
import type { DemoConfig, LedgerView } from './protocol.js';

export interface TanstackDemoOptions {
  /** The page's port on 127.0.0.1. @default 0 (the OS picks a free one) */
  port?: number;
}

export interface TanstackDemo {
  /** The page, e.g. `http://127.0.0.1:4310/`. */
  url: string;
  /** The payment API the page pays through; its `ledger` is the proof. */
  referenceServer: ReferenceServer;
  /** Stops both servers. */
  close(): Promise<void>;
}

const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url));

export async function startTanstackDemo(options: TanstackDemoOptions = {}): Promise<TanstackDemo> {
  const files = await pageFiles(
    new URL('./', import.meta.url),
    await bundleForBrowser(here('./page.ts'), { production: true }),
  );
  const referenceServer = await startReferenceServer();
  const config: DemoConfig = { api: referenceServer.url, run: randomUUID().slice(0, 8) };

  function ledgerView(): LedgerView {
    const { ledger } = referenceServer;
    const effects: Record<string, number> = {};
    for (const entry of ledger.requests) {
      if (entry.key !== undefined) effects[entry.key] = ledger.effectCount(entry.key);
    }
    return { effects, totalEffects: ledger.totalEffects(), requests: ledger.requests.length };
  }

  const page = await startPageServer({
    port: options.port ?? 0,
    files,
    json: { '/config.json': () => config, '/control/ledger': ledgerView },
    closeBackend: () => referenceServer.close(),
  });
  return { url: page.url, referenceServer, close: page.close };
}
