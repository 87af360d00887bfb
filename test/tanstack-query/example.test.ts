/**
 * The TanStack Query demo runs as its README says (`npx tsx
 * examples/tanstack-query/main.ts`): it serves the page, its bundle (React,
 * TanStack Query and oncely from the built package) and its configuration,
 * and stops cleanly on SIGTERM. The page itself is clicked through in
 * Chromium by test/browser/tanstack-query.browser.test.ts.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = `${root}node_modules/.bin/tsx`;

describe('examples/tanstack-query', () => {
  it('main.ts serves the page, its bundle and its API, and stops on SIGTERM', async () => {
    const child = spawn(tsx, ['examples/tanstack-query/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // 'close', not 'exit': the output is all read only once the child's pipes have closed.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const found = /Open {2}(http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout)?.[1];
          if (found !== undefined) resolve(found);
        });
        void exited.then((code) => reject(new Error(`the demo exited (${code}) before serving:\n${stdout}${stderr}`)));
      });
      expect(stdout).toContain('Ctrl-C to stop.');

      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="/app.js">');
      const app = await fetch(`${url}app.js`);
      expect(app.status).toBe(200);
      expect(app.headers.get('content-type')).toMatch(/javascript/);
      const bundle = await app.text();
      // React, TanStack Query and the adapter are in the page's bundle.
      expect(bundle).toContain('oncely/tanstack-query');
      expect(bundle.length).toBeGreaterThan(50_000);
      const config = (await (await fetch(`${url}config.json`)).json()) as { api: string; run: string };
      expect(config.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ledger = (await (await fetch(`${url}control/ledger`)).json()) as { totalEffects: number };
      expect(ledger.totalEffects).toBe(0);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toContain('Stopping…');
  }, 90_000);
});
