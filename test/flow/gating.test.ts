import { describe, expect, it } from 'vitest';
import { HOSTS_KEPT_MAX, hostOf, hostsKeptCount } from '../../src/flow/gating.js';

describe('the host of a stored URL, for its gate', () => {
  it('is the URL host, port included, the same on every call', () => {
    expect(hostOf('https://api.example.com/v1/payments')).toBe('api.example.com');
    expect(hostOf('https://api.example.com/v1/payments')).toBe('api.example.com');
    expect(hostOf('http://127.0.0.1:8080/payments?x=1')).toBe('127.0.0.1:8080');
    expect(hostOf('https://API.Example.com:443/a')).toBe('api.example.com');
  });

  it('remembers a bounded number of URLs (paths with ids do not grow it without end)', () => {
    for (let i = 0; i < HOSTS_KEPT_MAX * 3; i++) {
      expect(hostOf(`https://h${i % 7}.example.com/orders/${i}`)).toBe(`h${i % 7}.example.com`);
      expect(hostsKeptCount()).toBeLessThanOrEqual(HOSTS_KEPT_MAX);
    }
    expect(hostsKeptCount()).toBeGreaterThan(0);
  });

  it('rejects what is not a URL, as parsing it did', () => {
    expect(() => hostOf('not a url')).toThrow(TypeError);
  });
});
