import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
const entry = process.argv[2] ?? 'src/browser.ts';
const name = process.argv[3] ?? 'createBrowserClient';
const r = await build({ stdin: { contents: `export { ${name} } from './${entry}';`, resolveDir: process.cwd(), loader: 'ts' }, bundle: true, write: false, minify: true, metafile: true, platform: 'browser', format: 'esm', target: 'es2022', logLevel: 'silent', splitting: true, outdir: 'split-out' });
const files = new Map(r.outputFiles.map((f) => [f.path.slice(process.cwd().length + 1), f.contents]));
for (const [o, m] of Object.entries(r.metafile.outputs)) {
  const c = files.get(o)!;
  console.log(o, m.entryPoint ?? '', 'min', c.length, 'gz', gzipSync(c, { level: 9 }).length, 'imports', m.imports.map((i) => `${i.kind === 'dynamic-import' ? 'dyn:' : ''}${i.path}`).join(' '));
  const top = Object.entries(m.inputs).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput).slice(0, 8).map(([f, u]) => `${f.replace(/.*node_modules\//, '')}:${u.bytesInOutput}`);
  console.log('   ', top.join(' '));
}
