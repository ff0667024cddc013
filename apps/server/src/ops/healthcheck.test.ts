// The image's health probe: where it looks for the server it belongs to.
import { describe, expect, it } from 'vitest';
import { probeUrl } from './healthcheck.js';

describe('probeUrl', () => {
  it.each([
    ['every IPv4 address', { host: '0.0.0.0', port: 3000 }, 'http://127.0.0.1:3000/healthz'],
    ['every IPv6 address', { host: '::', port: 3000 }, 'http://[::1]:3000/healthz'],
    ['the IPv6 loopback', { host: '::1', port: 8080 }, 'http://[::1]:8080/healthz'],
    ['the IPv4 loopback', { host: '127.0.0.1', port: 3000 }, 'http://127.0.0.1:3000/healthz'],
    ['a name', { host: 'localhost', port: 3000 }, 'http://localhost:3000/healthz'],
    ['one address of the host', { host: '10.1.2.3', port: 3000 }, 'http://10.1.2.3:3000/healthz'],
  ])('listening on %s', (_, given, want) => {
    expect(probeUrl(given.host, given.port)).toBe(want);
  });
});
