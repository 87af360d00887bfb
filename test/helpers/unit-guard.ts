/**
 * Setup file of the `unit` tier (see vitest.config.ts): a unit test runs pure
 * code on fake time. Opening or listening on a socket, spawning a child
 * process, or writing to the file system throws here, so a test that needs
 * any of them fails loudly and is moved to the `integration` tier instead of
 * slowing the unit tier down or making it flaky. Reading files (module
 * loading) stays allowed.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);

function refuse(what: string): never {
  throw new Error(
    `unit tier: ${what} is not allowed here (sockets, files and child processes belong to the integration tier; ` +
      'see the tier globs in vitest.config.ts)',
  );
}

function block(target: Record<string, unknown>, names: readonly string[], label: string, async = false): void {
  for (const name of names) {
    if (typeof target[name] === 'function') {
      target[name] = async ? async () => refuse(`${label}.${name}()`) : () => refuse(`${label}.${name}()`);
    }
  }
}

const net = require('node:net') as typeof import('node:net');
net.Server.prototype.listen = function listen(): never {
  refuse('listening on a socket');
};
net.Socket.prototype.connect = function connect(): never {
  refuse('opening a socket');
};

block(
  require('node:child_process') as Record<string, unknown>,
  ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'],
  'child_process',
);

const FILE_WRITES = ['writeFile', 'appendFile', 'mkdir', 'mkdtemp', 'rm', 'rmdir', 'unlink', 'rename', 'copyFile'];
const fs = require('node:fs') as Record<string, unknown>;
block(fs, [...FILE_WRITES, ...FILE_WRITES.map((name) => `${name}Sync`), 'createWriteStream'], 'fs');
block(fs.promises as Record<string, unknown>, FILE_WRITES, 'fs.promises', true);

// Make `import { spawn } from 'node:child_process'` and friends see the blocked versions too.
syncBuiltinESMExports();
