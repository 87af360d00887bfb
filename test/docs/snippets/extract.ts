/**
 * The code blocks of the documentation, read from markdown: every ```ts
 * block says how it is checked, in an HTML comment on the line before it
 * (invisible on GitHub):
 *
 *   <!-- snippet: run preamble=node -->     compiled against the built package, then run
 *   <!-- snippet: types preamble=browser --> compiled only (browser-only, PostgreSQL)
 *
 * The preamble (preambles/<name>.ts) is put before the block: the names a
 * fragment takes for granted (`getToken`, `session`), and for a block that
 * runs, a local reference server that `https://api.example.com` is routed
 * to. A ```ts block without the comment is an error, so none goes unchecked.
 * ```json blocks must parse.
 */

export type SnippetMode = 'run' | 'types';

export interface Snippet {
  /** The markdown file, as given. */
  file: string;
  /** 1-based line of the block's first line of code. */
  line: number;
  mode: SnippetMode;
  preamble: string;
  code: string;
}

export interface Extracted {
  snippets: Snippet[];
  /** ```json blocks (parsed by the check). */
  json: { file: string; line: number; code: string }[];
  /** Blocks that do not say how they are checked, or say it wrongly. */
  problems: string[];
}

const ANNOTATION = /^<!-- snippet: (run|types)(?: preamble=([\w-]+))? -->$/;
const FENCE = /^```(\w*)\s*$/;

export function extractSnippets(markdown: string, file: string): Extracted {
  const lines = markdown.split('\n');
  const out: Extracted = { snippets: [], json: [], problems: [] };
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (open === null) continue;
    const lang = open[1] ?? '';
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end] ?? '')) end++;
    if (end === lines.length) {
      out.problems.push(`${file}:${i + 1}: a code block that is never closed`);
      break;
    }
    const code = lines.slice(start, end).join('\n');
    const previous = lines[i - 1] ?? '';
    const annotation = ANNOTATION.exec(previous);
    if (lang === 'ts' || lang === 'typescript') {
      if (annotation === null) {
        const hint = previous.startsWith('<!-- snippet') ? ` (unreadable: ${previous})` : '';
        out.problems.push(
          `${file}:${i + 1}: a ts block without "<!-- snippet: run|types preamble=<name> -->" on the line before${hint}`,
        );
      } else {
        out.snippets.push({
          file,
          line: start + 1,
          mode: annotation[1] as SnippetMode,
          preamble: annotation[2] ?? 'none',
          code,
        });
      }
    } else if (annotation !== null) {
      out.problems.push(
        `${file}:${i + 1}: a snippet annotation before a \`${lang}\` block (only ts blocks are compiled)`,
      );
    } else if (lang === 'json') {
      out.json.push({ file, line: start + 1, code });
    }
    i = end;
  }
  return out;
}
