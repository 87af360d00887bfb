/**
 * Every relative link of README.md and docs/*.md leads somewhere: the file
 * exists, and a `#anchor` names a heading of it (GitHub's slugs). Content
 * moves between the README and docs/; a link left behind fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const outsideCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...outsideCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slugOf(m[1] ?? '')));
}

/** The relative links of `markdown` (outside code blocks and code spans): `[text](target)`. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((target) => !/^[a-z]+:/i.test(target));
}

/** What is wrong with each link of `file` (a path under the root). */
function brokenLinks(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return linksOf(text).flatMap((target) => {
    const [path = '', anchor] = target.split('#');
    const to = path === '' ? join(root, file) : join(root, dirname(file), path);
    if (!existsSync(to)) return [`${file}: ${target} (no such file)`];
    if (anchor === undefined || !to.endsWith('.md')) return [];
    return anchorsOf(readFileSync(to, 'utf8')).has(anchor)
      ? []
      : [`${file}: ${target} (no heading #${anchor} in ${relative(root, to)})`];
  });
}

describe('documentation links', () => {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];

  it('every relative link names an existing file and heading', () => {
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });

  it('the README links every file of docs/', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const linked = new Set(linksOf(readme).map((target) => target.split('#')[0]));
    expect(files.filter((f) => f.startsWith('docs/') && !linked.has(f))).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    expect(slugOf('Durability, step by step')).toBe('durability-step-by-step');
    expect(slugOf('One process that owns its outbox: `exclusive: true`')).toBe(
      'one-process-that-owns-its-outbox-exclusive-true',
    );
    expect(linksOf('[a](docs/x.md#y) `[b](c.md)` [d](https://e.example)')).toEqual(['docs/x.md#y']);
  });
});
