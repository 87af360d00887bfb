/**
 * The built `oncely` binary run as a user runs it (`npm test` builds first):
 * exit code, stdout and stderr.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI's entry in the build. */
export const CLI_BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `oncely <args> --dir <dir>`. */
export function cli(dir: string, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_BIN, ...args, '--dir', dir], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}
