/** The browser harness itself: Chromium lookup (fail in CI, skip elsewhere) and the static server. */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chromiumForSuite, findChromium, serveStatic } from '../helpers/browser.js';

const here = fileURLToPath(import.meta.url);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('browser harness', () => {
  it('prefers CHROMIUM_PATH, then the first candidate that exists', () => {
    expect(findChromium({ CHROMIUM_PATH: here }, ['/nonexistent/chromium'])).toBe(here);
    expect(findChromium({}, ['/nonexistent/chromium', here])).toBe(here);
    expect(findChromium({}, ['/nonexistent/chromium'])).toBeUndefined();
    expect(() => findChromium({ CHROMIUM_PATH: '/nonexistent/chromium' })).toThrow(/does not exist/);
  });

  it('fails the suite in CI when Chromium is missing', () => {
    expect(() => chromiumForSuite('suite', { CI: 'true' }, ['/nonexistent/chromium'])).toThrow(
      /suite: Chromium not found.*must run in CI/,
    );
  });

  it('skips with a loud warning outside CI when Chromium is missing', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(chromiumForSuite('suite', {}, ['/nonexistent/chromium'])).toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/SKIPPING browser suite "suite"/);
  });

  it('serves the given files on 127.0.0.1 and 404s the rest', async () => {
    const server = await serveStatic({ '/a.js': { body: 'export {};', type: 'text/javascript' } });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const hit = await fetch(`${server.url}/a.js`);
      expect(hit.status).toBe(200);
      expect(hit.headers.get('content-type')).toBe('text/javascript');
      expect(await hit.text()).toBe('export {};');
      expect((await fetch(`${server.url}/toString`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
