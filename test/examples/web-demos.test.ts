/**
 * The two browser demos run as their READMEs say (`npm run demo:web`, `npx
 * tsx examples/tanstack-query/main.ts`): each serves its page, its bundle
 * (oncely from the built package) and its configuration, says so when its
 * port is taken, and stops cleanly on SIGTERM. The pages themselves are
 * clicked through in Chromium by test/browser/checkout-web.browser.test.ts
 * and test/browser/tanstack-query.browser.test.ts.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = `${root}node_modules/.bin/tsx`;

interface Started {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the exit code once the child's pipes have closed (all its output read). */
  exited: Promise<number | null>;
  output: () => string;
}

function start(main: string, port: string): Started {
  const child = spawn(tsx, [main], { cwd: root, env: { ...process.env, PORT: port } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function pageUrl({ child, exited, output }: Started): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const found = /Open {2}(http:\/\/127\.0\.0\.1:\d+\/)/.exec(output())?.[1];
      if (found !== undefined) resolve(found);
    });
    void exited.then((code) => reject(new Error(`the demo exited (${code}) before serving:\n${output()}`)));
  });
}

const demos = [
  {
    main: 'examples/checkout-web/main.ts',
    command: 'npm run demo:web',
    // The page's own code and oncely's browser client are in its bundle.
    bundleHas: ['createBrowserClient'],
    extraFiles: ['sw.js'],
  },
  {
    main: 'examples/tanstack-query/main.ts',
    command: 'npx tsx examples/tanstack-query/main.ts',
    // React, TanStack Query and the adapter are in the page's bundle.
    bundleHas: ['oncely/tanstack-query'],
    extraFiles: [],
  },
];

describe.each(demos)('$main', ({ main, command, bundleHas, extraFiles }) => {
  it('serves the page, its bundle and its API, and stops on SIGTERM', async () => {
    const demo = start(main, '0');
    try {
      const url = await pageUrl(demo);
      expect(demo.output()).toContain('Ctrl-C to stop.');

      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module" src="/app.js">');
      const app = await fetch(`${url}app.js`);
      expect(app.status).toBe(200);
      expect(app.headers.get('content-type')).toMatch(/javascript/);
      const bundle = await app.text();
      for (const text of bundleHas) expect(bundle).toContain(text);
      for (const file of extraFiles) expect((await fetch(`${url}${file}`)).status).toBe(200);
      expect((await fetch(`${url}nothing-here`)).status).toBe(404);
      expect((await fetch(`${url}config.json`, { method: 'POST' })).status).toBe(405);
      const config = (await (await fetch(`${url}config.json`)).json()) as { api: string; run: string };
      expect(config.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ledger = (await (await fetch(`${url}control/ledger`)).json()) as { totalEffects: number };
      expect(ledger.totalEffects).toBe(0);
    } finally {
      demo.child.kill('SIGTERM');
    }
    expect(await demo.exited).toBe(0);
    expect(demo.output()).toContain('Stopping…');
  }, 90_000);

  it('names another way to start when its port is taken', async () => {
    const taken = createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)),
    );
    try {
      const demo = start(main, String(port));
      expect(await demo.exited).toBe(1);
      expect(demo.output()).toContain(`Port ${port} is in use. Try another one: PORT=0 ${command}`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 90_000);
});
