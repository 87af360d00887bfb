import { bundleSize } from './bench/lib/bundle-size.js';
for (const [e, n] of [['oncely/browser', 'createBrowserClient'], ['oncely', 'createClient']] as const) {
  const s = await bundleSize(e, [n]);
  console.log(e, 'startup', s.startup.gzipBytes, s.startup.chunks, 'firstSend', s.firstSend.gzipBytes, s.firstSend.chunks, 'lazy', s.lazy.gzipBytes, 'whole', s.gzipBytes);
}
