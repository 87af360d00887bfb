/**
 * A throwaway PostgreSQL cluster for the fleet example and the tests: a temp
 * directory, `initdb`, `pg_ctl start` on a free port on 127.0.0.1, and a
 * `stop()` that shuts it down and removes the directory. No Docker.
 *
 * PostgreSQL refuses to run as root: when this process is root (a CI
 * container), the cluster runs as the `postgres` user (created by Debian's
 * package) through `runuser`, in a directory owned by that user.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Where the server binaries live: PATH first, then Debian's versioned directories (newest first). */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? '').split(':').filter((d) => d !== '');
  const debian = '/usr/lib/postgresql';
  if (fs.existsSync(debian)) {
    const versions = fs
      .readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    dirs.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  for (const dir of dirs) {
    const initdb = join(dir, 'initdb');
    if (!fs.existsSync(initdb)) continue;
    // A PATH entry may hold a symlink to the real directory, where pg_ctl and postgres sit together.
    const real = dirname(fs.realpathSync(initdb));
    if (fs.existsSync(join(real, 'pg_ctl')) && fs.existsSync(join(real, 'postgres'))) return real;
  }
  return undefined;
}

export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  /** Creates a database and returns its connection string. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** The uid/gid to run the server as when we are root: Debian's `postgres` user, else `nobody`. */
async function unprivileged(): Promise<{ name: string; uid: number; gid: number }> {
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number((await exec('id', ['-u', name])).stdout.trim());
      const gid = Number((await exec('id', ['-g', name])).stdout.trim());
      return { name, uid, gid };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

export interface ClusterOptions {
  /**
   * Server settings beside the defaults, each passed as `-c name=value`.
   * @default {}
   * @example { shared_preload_libraries: 'pg_stat_statements' }
   */
  settings?: Record<string, string>;
}

/** Starts a fresh cluster; throws with the server log when it cannot. */
export async function startCluster(bin: string, options: ClusterOptions = {}): Promise<PostgresCluster> {
  const settings = Object.entries(options.settings ?? {}).map(([name, value]) => {
    if (!/^[a-z_.]+$/.test(name) || !/^[\w.,-]+$/.test(value))
      throw new Error(`startCluster: bad setting ${name}=${value}`);
    return ` -c ${name}=${value}`;
  });
  const root = process.getuid?.() === 0;
  const user = root ? await unprivileged() : undefined;
  const dir = fs.mkdtempSync(join(tmpdir(), 'oncely-pg-'));
  if (user !== undefined) fs.chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const run = (command: string, args: string[]) =>
    user === undefined
      ? exec(join(bin, command), args)
      : exec('runuser', ['-u', user.name, '--', join(bin, command), ...args]);
  const port = await freePort();
  try {
    await run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await run('pg_ctl', [
      'start',
      '-w',
      '-t',
      '30',
      '-D',
      data,
      '-l',
      log,
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${settings.join('')}`,
    ]);
  } catch (error) {
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${text}`);
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    async createDatabase(name) {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    async stop() {
      try {
        await run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
