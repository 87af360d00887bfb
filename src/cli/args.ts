/**
 * The command line, parsed strictly: an unknown flag, a missing value, an
 * extra argument or a malformed `--header` is a one-line usage error (exit
 * 2), never a stack trace. Nothing here touches the store.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { HEADER_NAME, OPERATION_STATES } from '../model.js';
import { closestName } from '../policy/option-keys.js';

export const USAGE = `usage: oncely <command> [args] [--dir D] [--config F] [--header "Name: value"] [--json]

  list [--state S]    operations in the store (S: ${OPERATION_STATES.join(', ')}, quarantined)
  show <key>          one operation and its attempt timeline
  retry <key>         resend a blocked or unknown operation with the same key
  discard <key>       forget an operation that is not in flight (--force: one that may have
                      taken effect, once you have reconciled it at the server)
  drain               resume every open operation, with progress and what it waits for;
                      --once: one pass, not waiting for other owners' leases;
                      --timeout S: stop after S seconds, giving the leases back
  purge --expired     remove finished operations past their retention

  Ctrl-C (SIGINT) or SIGTERM gives back every lease this process holds before it exits.

  --dir D             the file store (default .oncely)
  --config F          a .json or .mjs file with { baseUrl, policy, endpoints, leaseMs }: the app's rules,
                      for records stored without their policy (newer records carry their own), and
                      the lease length its clients use (a drain takes over a lease only after it)
  --header "N: v"     sent with retry/drain, never stored (repeatable)
  --json              machine-readable output (errors too, on stderr)
  --version, --help`;

/** Commands and how many positional arguments each takes. */
export const COMMANDS: Readonly<Record<string, number>> = {
  list: 0,
  show: 1,
  retry: 1,
  discard: 1,
  drain: 0,
  purge: 0,
};

/** Commands that write to the store: refused up front on a read-only one. */
export const WRITING_COMMANDS: readonly string[] = ['retry', 'discard', 'drain', 'purge'];

/** A mistake on the command line: one line on stderr, exit 2. */
export class UsageError extends Error {}

export interface CliArgs {
  command: string | undefined;
  /** The key, for commands that take one. */
  key: string | undefined;
  dir: string;
  config: string | undefined;
  state: string | undefined;
  headers: Record<string, string>;
  expired: boolean;
  /** discard: even an operation that may have taken effect. */
  force: boolean;
  /** drain: one pass, without waiting for leases held elsewhere. */
  once: boolean;
  /** drain: stop after this long (from `--timeout S`, seconds). */
  timeoutMs: number | undefined;
  json: boolean;
  help: boolean;
  version: boolean;
}

const FLAGS = {
  dir: { type: 'string', default: '.oncely' },
  config: { type: 'string' },
  state: { type: 'string' },
  header: { type: 'string', multiple: true },
  expired: { type: 'boolean', default: false },
  force: { type: 'boolean', default: false },
  once: { type: 'boolean', default: false },
  timeout: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const;

export function parseCli(argv: readonly string[]): CliArgs {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof FLAGS }>>;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: FLAGS });
  } catch (error) {
    throw new UsageError(parseErrorText(error));
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  const args: CliArgs = {
    command,
    key: undefined,
    dir: values.dir,
    config: values.config,
    state: values.state,
    headers: parseHeaders(values.header ?? []),
    expired: values.expired,
    force: values.force,
    once: values.once,
    timeoutMs: values.timeout === undefined ? undefined : secondsToMs(values.timeout),
    json: values.json,
    help: values.help,
    version: values.version,
  };
  if (command === undefined || args.help || args.version) return args;
  const arity = COMMANDS[command];
  if (arity === undefined || !Object.hasOwn(COMMANDS, command)) {
    const close = closestName(command, Object.keys(COMMANDS));
    throw new UsageError(`unknown command "${command}"${close === undefined ? '' : ` (did you mean "${close}"?)`}`);
  }
  if (rest.length < arity) throw new UsageError(`${command} needs a key: oncely ${command} <key>`);
  if (rest.length > arity) throw new UsageError(`unexpected argument "${rest[arity]}" after ${command}`);
  args.key = rest[0];
  if (args.state !== undefined && command !== 'list') throw new UsageError('--state only applies to list');
  if (args.expired && command !== 'purge') throw new UsageError('--expired only applies to purge');
  if (args.force && command !== 'discard') throw new UsageError('--force only applies to discard');
  if (args.once && command !== 'drain') throw new UsageError('--once only applies to drain');
  if (args.timeoutMs !== undefined && command !== 'drain') throw new UsageError('--timeout only applies to drain');
  return args;
}

/** `--timeout S`: a positive number of seconds, as milliseconds. */
function secondsToMs(text: string): number {
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--timeout needs a positive number of seconds (got "${text}")`);
  }
  return Math.round(seconds * 1000);
}

/** `"Name: value"` lines as headers; a bad one is a usage error naming it. */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon <= 0 ? '' : line.slice(0, colon).trim();
    const value = colon <= 0 ? '' : line.slice(colon + 1).trim();
    if (!HEADER_NAME.test(name)) {
      throw new UsageError(`--header needs "Name: value" with a header name before the colon (got "${line}")`);
    }
    if (/[\r\n\0]/.test(value)) throw new UsageError(`--header "${name}" has a line break or NUL in its value`);
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

/** node:util's parse errors, as one short sentence naming the flag. */
function parseErrorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(message)?.[1] ?? message;
    const close = closestName(flag.replace(/^-+/, ''), Object.keys(FLAGS));
    return `unknown option ${flag}${close === undefined ? '' : ` (did you mean --${close}?)`}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /'(-[^ ']+)/.exec(message)?.[1];
    return flag === undefined ? (message.split('\n')[0] ?? message) : `${flag} needs a value`;
  }
  return message.split('\n')[0] ?? message;
}

/** The package version, read from the package.json next to the build (dist/cli → ../../package.json). */
export function packageVersion(): string {
  try {
    const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}
