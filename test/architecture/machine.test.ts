/**
 * Nothing but the machine seam reads the machine (DESIGN.md, principle 15).
 *
 * The file store judges claims and journals by the machine's boot time, boot
 * id, host id and pids. `src/store/file/machine.ts` is the one module that
 * reads them; everything else asks the `Machine` a store was given. In the
 * tests, every file store takes the suite's machine (test/helpers/machine.ts:
 * the boot time injected), and files are aged relative to it through the
 * helpers: a suite that read the machine would pass or fail by when its
 * machine booted, how it is named, or how busy it is.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

interface Rule {
  what: string;
  pattern: RegExp;
  /** Paths (relative to the repository, `/`-separated) allowed to match. */
  allowed: readonly string[];
}

const SEAM = 'src/store/file/machine.ts';
const SEAM_TEST = 'test/store/file.machine.test.ts';
const TEST_MACHINE = 'test/helpers/machine.ts';
const FILE_HELPERS = 'test/helpers/file-store.ts';

const RULES: readonly Rule[] = [
  { what: "the system's uptime (boot time)", pattern: /\buptime\s*\(/, allowed: [SEAM] },
  { what: 'the host name', pattern: /\bhostname\s*\(/, allowed: [SEAM] },
  { what: "the kernel's boot id", pattern: /boot_id/, allowed: [SEAM] },
  { what: 'the machine id', pattern: /machine-id/, allowed: [SEAM] },
  { what: 'the pid namespace', pattern: /\/proc\/self\/ns/, allowed: [SEAM] },
  { what: 'the load average', pattern: /\bloadavg\s*\(/, allowed: [] },
  { what: "another process's liveness", pattern: /process\.kill\([^,)]+,\s*0\s*\)/, allowed: [SEAM] },
  { what: "the system's machine", pattern: /\bsystemMachine\b/, allowed: [SEAM, TEST_MACHINE] },
  { what: "a file's times set by hand", pattern: /\butimes(Sync)?\s*\(/, allowed: [FILE_HELPERS] },
  {
    what: 'a file store opened on the real machine',
    pattern: /import\s*\{[^}]*\bfileStore\b[^}]*\}\s*from\s*'[./]*\/src\//,
    allowed: [TEST_MACHINE, SEAM_TEST],
  },
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return /\.(ts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** Every rule a file breaks, as `path: what`. */
function breaches(root: string, paths: string[], rules: readonly Rule[]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    const name = relative(root, path).split('\\').join('/');
    const text = readFileSync(path, 'utf8');
    for (const rule of rules) {
      if (!rule.allowed.includes(name) && rule.pattern.test(text)) found.push(`${name}: reads ${rule.what}`);
    }
  }
  return found;
}

describe('the machine seam', () => {
  it('only src/store/file/machine.ts reads the machine in src/, and tests read it only through the seam', () => {
    const paths = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'test'))].filter(
      (path) => !path.endsWith('machine.test.ts') || !path.includes('architecture'),
    );
    expect(breaches(ROOT, paths, RULES)).toEqual([]);
  });

  it('catches each kind of read (the rules are not vacuous)', () => {
    const samples: Record<string, string> = {
      uptime: "import { uptime } from 'node:os'; const up = uptime();",
      hostname: 'os.hostname()',
      boot: "readFileSync('/proc/sys/kernel/random/boot_id')",
      machine: "readFileSync('/etc/machine-id')",
      namespace: "readlinkSync('/proc/self/ns/pid')",
      load: 'os.loadavg()',
      kill: 'process.kill(pid, 0)',
      system: 'systemMachine.bootedAtMs()',
      times: 'fs.utimesSync(path, then, then)',
      store: "import { createClient, fileStore } from '../../src/node.js';",
    };
    for (const [name, text] of Object.entries(samples)) {
      const hits = RULES.filter((rule) => rule.pattern.test(text));
      expect(hits.length, name).toBeGreaterThan(0);
    }
  });
});
