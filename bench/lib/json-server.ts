/** Starts `json-server-child.ts` in its own process and returns its URL. */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ChildServer {
  url: string;
  requests(): Promise<number>;
  close(): Promise<void>;
}

export async function startChildServer(): Promise<ChildServer> {
  const child = fork(fileURLToPath(new URL('./json-server-child.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { requests: number }).requests));
        child.send('count');
      }),
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}
