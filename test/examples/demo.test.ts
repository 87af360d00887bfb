/**
 * The examples are part of the product: each one runs here, so none can rot.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsx = `${root}node_modules/.bin/tsx`;

describe('examples', () => {
  it('the main demo proves every payment took effect exactly once', async () => {
    const { stdout } = await run(tsx, ['examples/demo/main.ts'], { cwd: root, timeout: 60_000 });
    expect(stdout).toContain('Every payment took effect exactly once.');
    expect(stdout.match(/✔/g)).toHaveLength(7);
    expect(stdout).toMatch(/✔ pay-crash\s+effects=1/);
    expect(stdout).not.toContain('✘');
    expect(stdout).toMatch(/resend #1, same key/);
  }, 90_000);

  it('per-endpoint-policy shows rule matching and each endpoint behaving per its policy', async () => {
    const { stdout } = await run(tsx, ['examples/per-endpoint-policy/main.ts'], { cwd: root, timeout: 60_000 });
    expect(stdout).toMatch(/POST \/v1\/payments\s+→ POST \/v1\/payments\s+profile=stripe/);
    expect(stdout).toMatch(/GET\s+\/catalog\/shoes\/42\s+→ GET \/catalog\/\*\*.*header=no key/);
    expect(stdout).toMatch(/POST \/v1\/refunds\s+→ default/);
    expect(stdout.match(/✔/g)).toHaveLength(6);
    expect(stdout).not.toContain('✘');
  }, 90_000);

  it('node-outbox buffers while the API is down, survives SIGKILL, drains once after restart', async () => {
    const { stdout } = await run(tsx, ['examples/node-outbox/main.ts'], { cwd: root, timeout: 90_000 });
    expect(stdout).toContain('Every buffered action took effect exactly once after the restart.');
    expect(stdout.match(/✔ outbox-\w+: effects=1/g)).toHaveLength(5);
    expect(stdout.match(/\[drain\] drained outbox-\w+: succeeded/g)).toHaveLength(5);
    expect(stdout).toMatch(/\[enqueue\] attempt \d+ for outbox-\w+: not_sent/);
  }, 120_000);
});
