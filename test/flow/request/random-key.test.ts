/**
 * Random keys where `crypto.randomUUID` is missing (a browser page outside a
 * secure context): v4 UUIDs from `crypto.getRandomValues`.
 */
import { describe, expect, it, vi } from 'vitest';
import { formatUuid, randomUuid, systemRuntime } from '../../../src/runtime.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('random keys without crypto.randomUUID', () => {
  it('systemRuntime.uuid falls back to getRandomValues, setting the version and variant bits', () => {
    vi.stubGlobal('crypto', {
      getRandomValues: (bytes: Uint8Array) => bytes.fill(0xff),
    });
    expect(systemRuntime.uuid()).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
  });

  it('each is a v4 UUID, and two differ', () => {
    const [a, b] = [randomUuid(), randomUuid()];
    expect(a).toMatch(V4);
    expect(b).toMatch(V4);
    expect(a).not.toBe(b);
  });

  it('formatUuid keeps the other bits as given', () => {
    const bytes = Uint8Array.from({ length: 16 }, (_, i) => i);
    expect(formatUuid(bytes, 4)).toBe('00010203-0405-4607-8809-0a0b0c0d0e0f');
    expect(formatUuid(bytes, 8)).toBe('00010203-0405-8607-8809-0a0b0c0d0e0f');
  });
});
