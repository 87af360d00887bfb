#!/usr/bin/env node
/**
 * `oncely` — look into and operate a Node file store.
 *
 *   oncely list [--state S]      operations (S: pending, in_flight, succeeded, blocked, failed, unknown, quarantined)
 *   oncely show <key>            one operation and its attempt timeline
 *   oncely retry <key>           resend a blocked or unknown operation with the same key
 *   oncely discard <key>         forget an operation that is not in flight (--force: one that may have taken effect)
 *   oncely drain                 resume every open operation, saying what it waits for (--once, --timeout S)
 *   oncely purge --expired       remove finished operations past their retention
 *
 * Options: --dir D (default .oncely), --config F (the app's rules, for records
 * stored without their policy), --header "Name: value" (repeatable, sent with
 * retry/drain and never stored), --json, --version, --help.
 *
 * Every failure is one line on stderr (JSON with --json) and an exit code:
 * 1 an operation did not succeed or was not found, 2 a usage, store or
 * config problem. Never a stack trace (ONCELY_DEBUG=1 prints it).
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createClient, isOncelyError, type OncelyClient } from '../index.js';
import { fileStore } from '../store/file/index.js';
import { type CliArgs, packageVersion, parseCli, USAGE, UsageError, WRITING_COMMANDS } from './args.js';
import { type CommandContext, discard, drain, list, purge, retry, show } from './commands.js';
import { ConfigError, loadConfig, storeProblem } from './environment.js';

const out = (text: string) => console.log(text);
/** Raw stderr: progress lines bring their own line ends (a terminal redraws the bar in place). */
const err = (text: string) => {
  process.stderr.write(text);
};

/** One line on stderr: `oncely: …`, or `{"error": {…}}` with --json. */
function fail(json: boolean, code: string, message: string, exitCode: number): number {
  console.error(json ? JSON.stringify({ error: { code, message } }) : `oncely: ${message}`);
  return exitCode;
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  let args: CliArgs;
  try {
    args = parseCli(argv);
  } catch (error) {
    if (error instanceof UsageError) return fail(json, 'usage', `${error.message} (oncely --help for usage)`, 2);
    throw error;
  }
  if (args.version) {
    out(json ? JSON.stringify({ version: packageVersion() }) : `oncely ${packageVersion()}`);
    return 0;
  }
  if (args.help || args.command === undefined) {
    (args.help ? out : console.error)(USAGE);
    return args.help ? 0 : 2;
  }
  const command = args.command;
  const dir = resolve(args.dir);
  const problem = await storeProblem(dir, WRITING_COMMANDS.includes(command), command);
  if (problem !== undefined) return fail(json, 'store', problem, 2);
  let client: OncelyClient;
  // Its own owner id: any other id's live lease is another process's (or a crashed one's, until it expires).
  const owner = `oncely-cli-${process.pid}-${randomUUID()}`;
  const store = fileStore({ dir });
  try {
    const config = args.config === undefined ? {} : await loadConfig(args.config);
    const headers = args.headers;
    try {
      client = createClient({ ...config, store, owner, headers: () => headers });
    } catch (error) {
      if (isOncelyError(error) && args.config !== undefined) throw new ConfigError(args.config, error.message);
      throw error;
    }
  } catch (error) {
    await store.close?.();
    if (error instanceof ConfigError) return fail(json, 'config', error.message, 2);
    throw error;
  }
  const ctx: CommandContext = {
    client,
    store,
    owner,
    json,
    out,
    err,
    tty: process.stderr.isTTY === true,
  };
  // Ctrl-C or a TERM: close the client, which gives back every lease this process holds, then exit
  // 128 + the signal's number. Left to the default, the process died holding them, and every other
  // drainer waited a lease's length for operations nobody was sending. A second signal exits at once.
  let stoppedBy: 'SIGINT' | 'SIGTERM' | undefined;
  const onSignal = (signal: 'SIGINT' | 'SIGTERM'): void => {
    if (stoppedBy !== undefined) process.exit(128 + SIGNAL_NUMBERS[signal]);
    stoppedBy = signal;
    err(json ? '' : `\noncely: ${signal}: giving back the leases this process holds, then exiting\n`);
    void client.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const code = await run(ctx, args, command);
    return stoppedBy === undefined ? code : 128 + SIGNAL_NUMBERS[stoppedBy];
  } catch (error) {
    if (error instanceof UsageError) return fail(json, 'usage', `${error.message} (oncely --help for usage)`, 2);
    if (isOncelyError(error)) return fail(json, error.code, `${error.message}. ${error.remediation}`, 1);
    throw error;
  } finally {
    await client.close();
    await store.close?.();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

const SIGNAL_NUMBERS: Record<'SIGINT' | 'SIGTERM', number> = {
  SIGINT: 2,
  SIGTERM: 15,
};

function run(ctx: CommandContext, args: CliArgs, command: string): Promise<number> {
  const key = args.key ?? '';
  switch (command) {
    case 'list':
      return list(ctx, args.state);
    case 'show':
      return show(ctx, key);
    case 'retry':
      return retry(ctx, key);
    case 'discard':
      return discard(ctx, key, args.force);
    case 'drain':
      return drain(ctx, { once: args.once, timeoutMs: args.timeoutMs });
    case 'purge':
      if (!args.expired) {
        throw new UsageError('purge needs --expired (only finished operations past retention are removed)');
      }
      return purge(ctx);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** A failure nobody planned for, still in one line: what failed, on which file, and why. */
function unexpected(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (typeof e?.code === 'string' && typeof e.syscall === 'string') {
    const why =
      e.code === 'EACCES' || e.code === 'EPERM'
        ? 'no permission (is the store owned by another user?)'
        : e.code === 'EROFS'
          ? 'read-only file system'
          : e.code === 'ENOSPC'
            ? 'disk full'
            : e.code;
    return `${e.syscall} ${e.path ?? ''} failed: ${why}`.replace('  ', ' ');
  }
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error);
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (process.env.ONCELY_DEBUG === '1') console.error(error);
    process.exitCode = fail(argv.includes('--json'), 'unexpected', unexpected(error), 1);
  },
);
