#!/usr/bin/env node
/**
 * `oncely` — look into and operate a Node file store.
 *
 *   oncely list [--state S]      operations (S: pending, in_flight, succeeded, blocked, failed, unknown, quarantined)
 *   oncely show <key>            one operation and its attempt timeline
 *   oncely retry <key>           resend a blocked or unknown operation with the same key
 *   oncely discard <key>         forget an operation that is not in flight
 *   oncely drain                 resume every due operation, with a progress bar
 *   oncely purge --expired       remove finished operations past their retention
 *
 * Options: --dir D (default .oncely), --header "Name: value" (repeatable,
 * sent with retry/drain and never stored), --json (machine-readable output).
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { summaries } from '../flow/resume.js';
import { createClient, isOncelyError, type OperationState } from '../index.js';
import { OPERATION_STATES } from '../model.js';
import { fileStore } from '../store/file/index.js';
import type { OperationStore } from '../store/store.js';
import { listLine, progressBar, quarantineLine, timeline } from './format.js';

const USAGE = `usage: oncely <list|show|retry|discard|drain|purge> [args] [--dir D] [--header "Name: value"] [--json]

  list [--state S]    operations in the store (S: ${OPERATION_STATES.join(', ')}, quarantined)
  show <key>          one operation and its attempt timeline
  retry <key>         resend a blocked or unknown operation with the same key
  discard <key>       forget an operation that is not in flight
  drain               resume every due operation, with a progress bar
  purge --expired     remove finished operations past their retention`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dir: { type: 'string', default: '.oncely' },
      state: { type: 'string' },
      header: { type: 'string', multiple: true },
      expired: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, arg] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const dir = resolve(values.dir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    console.error(`oncely: no store at ${dir} (use --dir to point at one)`);
    return 2;
  }
  const headers = parseHeaders(values.header ?? []);
  const store = fileStore({ dir });
  const client = createClient({ store, headers: () => headers });
  try {
    switch (command) {
      case 'list':
        return await list(client, values.state, values.json);
      case 'show':
        return await show(client, requireKey(arg), values.json);
      case 'retry': {
        const outcome = await client.retry(requireKey(arg));
        console.log(`${outcome.key}: ${outcome.state}${outcome.ok ? '' : ` — ${outcome.error?.message ?? ''}`}`);
        return outcome.ok ? 0 : 1;
      }
      case 'discard':
        await client.discard(requireKey(arg));
        console.log(`${arg}: discarded`);
        return 0;
      case 'drain':
        return await drain(client, store);
      case 'purge': {
        if (!values.expired)
          throw new UsageError('purge needs --expired (only finished operations past retention are removed)');
        console.log(`removed ${await client.sweep()} expired operation(s)`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`oncely: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (isOncelyError(error)) {
      console.error(`oncely: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await client.close();
  }
}

type Client = ReturnType<typeof createClient>;

async function list(client: Client, state: string | undefined, json: boolean): Promise<number> {
  if (state === 'quarantined') {
    const entries = await client.quarantined();
    if (json) console.log(JSON.stringify(entries, null, 2));
    else for (const entry of entries) console.log(quarantineLine(entry));
    return 0;
  }
  if (state !== undefined && !OPERATION_STATES.includes(state as OperationState)) {
    throw new UsageError(`unknown state "${state}"`);
  }
  const records = await client.list(state === undefined ? {} : { state: state as OperationState });
  const quarantined = await client.quarantined();
  if (json) {
    console.log(JSON.stringify(records, null, 2));
    return 0;
  }
  const now = Date.now();
  for (const record of records) console.log(listLine(record, now));
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.state, (counts.get(r.state) ?? 0) + 1);
  const summary = [...counts].map(([s, n]) => `${n} ${s}`).join(', ') || 'no operations';
  console.log(
    `\n${summary}${quarantined.length > 0 ? `; ${quarantined.length} corrupt record(s) quarantined (list --state quarantined)` : ''}`,
  );
  return 0;
}

async function show(client: Client, key: string, json: boolean): Promise<number> {
  const record = await client.get(key);
  if (record === undefined) {
    const corrupt = (await client.quarantined()).find((q) => q.id === key);
    console.error(
      corrupt === undefined ? `oncely: no operation with key ${key}` : `oncely: ${quarantineLine(corrupt)}`,
    );
    return 1;
  }
  console.log(json ? JSON.stringify(record, null, 2) : timeline(record));
  return 0;
}

async function drain(client: Client, store: OperationStore): Promise<number> {
  // Counted from summaries: whole records of 100k pending operations would all be held at once just to count them.
  const total = (await summaries(store, { state: ['pending', 'in_flight'] })).length;
  let done = 0;
  const tty = process.stderr.isTTY === true;
  const draw = () => process.stderr.write(tty ? `\r${progressBar(done, total)}` : `${progressBar(done, total)}\n`);
  draw();
  // Only the lines of failures are kept (printed after the progress bar), not every outcome.
  const failures: string[] = [];
  // A drain takes over operations of crashed processes too, once their leases expire.
  const summary = await client.resume({
    waitForLeases: true,
    onOutcome: (o) => {
      if (!o.ok) failures.push(`  ${o.key}: ${o.state} — ${o.error?.message ?? ''}`);
      done++;
      draw();
    },
  });
  if (tty) process.stderr.write('\n');
  const notSucceeded = summary.driven - summary.succeeded;
  console.log(`drained ${summary.driven} operation(s): ${summary.succeeded} succeeded, ${notSucceeded} not`);
  for (const line of failures) console.log(line);
  return notSucceeded === 0 && failures.length === 0 ? 0 : 1;
}

function requireKey(key: string | undefined): string {
  if (key === undefined) throw new UsageError('this command needs a key');
  return key;
}

function parseHeaders(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header needs "Name: value" (got "${line}")`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
