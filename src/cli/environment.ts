/**
 * What the CLI checks before opening a store, and the `--config` file. Each
 * problem is one sentence saying what is wrong and what to do, never a stack.
 */
import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PolicyOptions } from '../options.js';
import { checkOptionKeys } from '../policy/option-keys.js';

/**
 * The problem with `dir` as a store, if any: missing, a file, unreadable, or
 * read-only when the command writes.
 */
export async function storeProblem(dir: string, writes: boolean, command: string): Promise<string | undefined> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `no store at ${dir} (use --dir to point at one)`;
    return `cannot read the store at ${dir} (${code ?? String(error)})`;
  }
  if (!info.isDirectory()) {
    return `${dir} is a file, not a store: a file store is a directory (use --dir to point at one)`;
  }
  try {
    await access(dir, constants.R_OK | constants.X_OK);
  } catch {
    return `cannot read the store at ${dir}: no read permission for this user`;
  }
  if (!writes) return undefined;
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'it is on a read-only file system' : 'this user has no write permission';
    return `the store at ${dir} is read-only (${why}): ${command} writes to it; list and show work without writing`;
  }
  return undefined;
}

/** The app's rules, for resuming records stored before records carried their policy. */
export interface CliConfig {
  baseUrl?: string;
  policy?: PolicyOptions;
  endpoints?: Record<string, PolicyOptions>;
  /**
   * The lease length the app's clients use: a drain takes over another
   * owner's operation only once its lease stayed unchanged for an attempt
   * timeout plus this long, so it must match theirs.
   */
  leaseMs?: number;
}

export const CONFIG_KEYS: readonly string[] = ['baseUrl', 'policy', 'endpoints', 'leaseMs'];

/**
 * Reads a `--config` file: JSON (`.json`), or a module (`.mjs`, `.js`) whose
 * default export is the object, for rules with a custom profile. Its option
 * values are validated by `createClient`, like the app's own.
 */
export async function loadConfig(path: string): Promise<CliConfig> {
  const file = resolve(path);
  let config: unknown;
  if (extname(file) === '.json') {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new ConfigError(file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    try {
      config = JSON.parse(text);
    } catch (error) {
      throw new ConfigError(file, `is not valid JSON (${(error as Error).message})`);
    }
  } else if (['.mjs', '.js'].includes(extname(file))) {
    try {
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
      config = module.default;
    } catch (error) {
      throw new ConfigError(file, `cannot be loaded (${(error as Error).message.split('\n')[0]})`);
    }
  } else {
    throw new ConfigError(file, 'must be a .json, .mjs or .js file');
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new ConfigError(file, `must hold an object with ${CONFIG_KEYS.join(', ')}`);
  }
  try {
    checkOptionKeys(config, CONFIG_KEYS, '');
  } catch (error) {
    throw new ConfigError(file, (error as Error).message);
  }
  return config as CliConfig;
}

/** A `--config` file that cannot be used: exit 2, naming the file. */
export class ConfigError extends Error {
  constructor(file: string, problem: string) {
    super(`--config ${file}: ${problem}`);
  }
}
