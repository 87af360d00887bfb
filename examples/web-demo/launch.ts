/**
 * How both browser demos start from a terminal: the port from `PORT` (0
 * picks a free one), a clear line when it is taken, what to open and try,
 * and a clean stop on Ctrl-C or SIGTERM.
 */

export interface Launchable {
  url: string;
  close(): Promise<void>;
}

export interface LaunchOptions<T extends Launchable> {
  defaultPort: number;
  /** How a user starts this demo, for the "port in use" hint (`PORT=0 …` is put before it). */
  command: string;
  start(port: number): Promise<T>;
  /** What to print once it listens. */
  banner(demo: T): string;
}

export async function launchDemo<T extends Launchable>(options: LaunchOptions<T>): Promise<void> {
  const fromEnv = process.env.PORT;
  const port = fromEnv === undefined || fromEnv === '' ? options.defaultPort : Number(fromEnv);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`PORT=${fromEnv} is not a port number`);
    process.exit(1);
  }

  let demo: T;
  try {
    demo = await options.start(port);
  } catch (error) {
    const inUse = (error as { code?: unknown }).code === 'EADDRINUSE';
    console.error(
      inUse
        ? `Port ${port} is in use. Try another one: PORT=0 ${options.command}`
        : `The demo could not start: ${error instanceof Error ? error.message : String(error)}`,
    );
    process.exit(1);
  }
  console.log(options.banner(demo));

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping…');
    demo.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
