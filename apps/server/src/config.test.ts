import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Config, ConfigError, loadConfig, variableDefaults, variableNames } from './config.js';

type Case = [string, string, (c: Config) => unknown, unknown];

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      database: { engine: 'sqlite', path: resolve('data/animal-store.db') },
      redis: undefined,
      logLevel: 'info',
      production: false,
      limits: { ban: { threshold: 10, seconds: 900, graceSeconds: 5 }, anonymousPerMinute: 30 },
      connections: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 65_000,
        maxConnections: 1_000,
        maxConnectionsPerAddress: 256,
        trustProxy: undefined,
        maxPipelinedRequests: 16,
      },
      shutdownGraceMs: 10_000,
      trustProxy: undefined,
      corsOrigins: [],
      metricsToken: undefined,
      workers: 1,
      admin: undefined,
      usageRetentionDays: 400,
      auditRetentionDays: 400,
    });
  });

  it.each([
    ['PORT', '8080', (c) => c.port, 8080],
    ['HOST', '0.0.0.0', (c) => c.host, '0.0.0.0'],
    ['DATABASE_URL', '/srv/pets.db', (c) => c.database, { engine: 'sqlite', path: '/srv/pets.db' }],
    ['DATABASE_URL', 'file:/srv/pets.db', (c) => c.database, { engine: 'sqlite', path: '/srv/pets.db' }],
    ['DATABASE_URL', 'sqlite:///srv/pets.db', (c) => c.database, { engine: 'sqlite', path: '/srv/pets.db' }],
    ['DATABASE_URL', ':memory:', (c) => c.database, { engine: 'sqlite', path: ':memory:' }],
    [
      'DATABASE_URL',
      'postgres://db/animals',
      (c) => c.database,
      { engine: 'postgres', url: 'postgres://db/animals', poolSize: 10, statementTimeoutMs: 5_000 },
    ],
    ['DATABASE_URL', 'postgresql://db/animals', (c) => c.database.engine, 'postgres'],
    [
      'REDIS_URL',
      'redis://cache:6379',
      (c) => c.redis,
      {
        address: { topology: 'single', url: 'redis://cache:6379', tls: false },
        keyPrefix: 'animal-store:',
        commandTimeoutMs: 500,
      },
    ],
    ['LOG_LEVEL', 'warn', (c) => c.logLevel, 'warn'],
    ['NODE_ENV', 'production', (c) => c.production, true],
    ['NODE_ENV', 'test', (c) => c.production, false],
    ['RATE_LIMIT_BAN_THRESHOLD', '3', (c) => c.limits.ban.threshold, 3],
    ['RATE_LIMIT_BAN_SECONDS', '60', (c) => c.limits.ban.seconds, 60],
    ['RATE_LIMIT_ANONYMOUS_PER_MINUTE', '5', (c) => c.limits.anonymousPerMinute, 5],
    ['SHUTDOWN_GRACE_SECONDS', '2', (c) => c.shutdownGraceMs, 2_000],
    ['TRUST_PROXY', 'loopback', (c) => c.trustProxy, ['loopback']],
    ['TRUST_PROXY', '1', (c) => c.trustProxy, 1],
    ['TRUST_PROXY', '2', (c) => c.trustProxy, 2],
    ['TRUST_PROXY', 'true', (c) => c.trustProxy, true],
    ['TRUST_PROXY', 'false', (c) => c.trustProxy, false],
    [
      'TRUST_PROXY',
      'loopback, 10.0.0.0/8, fd00::/8',
      (c) => c.trustProxy,
      ['loopback', '10.0.0.0/8', 'fd00::/8'],
    ],
    [
      'CORS_ORIGINS',
      'https://a.example, http://127.0.0.1:8080',
      (c) => c.corsOrigins,
      ['https://a.example', 'http://127.0.0.1:8080'],
    ],
    ['CORS_ORIGINS', '*', (c) => c.corsOrigins, ['*']],
    ['METRICS_TOKEN', 'a-long-scrape-token', (c) => c.metricsToken, 'a-long-scrape-token'],
    ['WORKERS', '2', (c) => c.workers, 2],
    ['WORKERS', 'auto', (c) => c.workers >= 1, true],
    ['HEADERS_TIMEOUT_SECONDS', '3', (c) => c.connections.headersTimeoutMs, 3_000],
    ['REQUEST_TIMEOUT_SECONDS', '60', (c) => c.connections.requestTimeoutMs, 60_000],
    ['KEEP_ALIVE_TIMEOUT_SECONDS', '2', (c) => c.connections.keepAliveTimeoutMs, 2_000],
    ['MAX_CONNECTIONS', '10', (c) => c.connections.maxConnections, 10],
    ['MAX_CONNECTIONS_PER_ADDRESS', '5', (c) => c.connections.maxConnectionsPerAddress, 5],
    ['MAX_PIPELINED_REQUESTS', '2', (c) => c.connections.maxPipelinedRequests, 2],
    ['USAGE_RETENTION_DAYS', '30', (c) => c.usageRetentionDays, 30],
  ] satisfies Case[])('%s=%s reaches the configuration', (name, value, read, want) => {
    expect(read(loadConfig({ [name]: value }))).toEqual(want);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PORT', '1e3'],
    ['NODE_ENV', 'prod'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_BAN_SECONDS', '0'],
    ['MAX_CONNECTIONS', '-1'],
    ['MAX_CONNECTIONS_PER_ADDRESS', '0'],
    ['DATABASE_URL', 'mysql://db/animals'],
    ['REDIS_URL', 'localhost:6379'],
    ['DATABASE_POOL_SIZE', '0'],
    ['CORS_ORIGINS', 'https://a.example/path'],
    ['CORS_ORIGINS', 'not an origin'],
    ['METRICS_TOKEN', 'short'],
    ['WORKERS', '0'],
    ['WORKERS', 'many'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', 'loopback,proxy.example'],
    ['ADMIN_PORT', 'admin'],
    ['ADMIN_RATE_LIMIT_PER_MINUTE', '0'],
    ['USAGE_RETENTION_DAYS', '0'],
  ])('%s=%s is refused with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  const token = 't'.repeat(32);
  it('sets up the admin API only with ADMIN_PORT, and then needs ADMIN_TOKENS of 32+ characters', () => {
    expect(loadConfig({ ADMIN_TOKENS: token }).admin).toBeUndefined();
    expect(loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: ` ${token}, ${token}x ` }).admin).toEqual({
      port: 0,
      host: '127.0.0.1',
      tokens: [{ token }, { token: `${token}x` }],
      perMinute: 600,
    });
    expect(
      loadConfig({
        ADMIN_PORT: '3001',
        ADMIN_HOST: '0.0.0.0',
        ADMIN_TOKENS: token,
        ADMIN_RATE_LIMIT_PER_MINUTE: '5',
      }).admin,
    ).toEqual({
      port: 3001,
      host: '0.0.0.0',
      tokens: [{ token }],
      perMinute: 5,
    });
    // Named for the audit trail: `name:token`, a name of letters, digits, `.`, `_` and `-`.
    expect(
      loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: `billing:${token}, ${token}x` }).admin?.tokens,
    ).toEqual([{ name: 'billing', token }, { token: `${token}x` }]);
    expect(() => loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: `billing:short` })).toThrow(
      'ADMIN_TOKENS (the first entry): each token must be at least 32 characters',
    );
    expect(() => loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: `ops:${token},ops:${token}x` })).toThrow(
      'ADMIN_TOKENS: the name ops is given twice',
    );
    // One token under two names would audit every change by it under the last name.
    expect(() => loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: `billing:${token},support:${token}` })).toThrow(
      'ADMIN_TOKENS: one token is given twice (billing and support): each name needs a token of its own',
    );
    expect(() => loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: `${token},${token}` })).toThrow(
      /one token is given twice/,
    );
    // A name another token would be known by (an unnamed token's automatic name) is refused.
    expect(() => loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: `token-0123456789ab:${token}` })).toThrow(
      'ADMIN_TOKENS: the name token-0123456789ab has the form token-<fingerprint>',
    );
    expect(loadConfig({ ADMIN_PORT: '0', ADMIN_TOKENS: `token-ops:${token}` }).admin?.tokens).toEqual([
      { name: 'token-ops', token },
    ]);
    expect(() => loadConfig({ ADMIN_PORT: '3001' })).toThrow(/ADMIN_TOKENS: required when ADMIN_PORT is set/);
    expect(() => loadConfig({ ADMIN_PORT: '3001', ADMIN_TOKENS: `${token},short` })).toThrow(
      'ADMIN_TOKENS (the second entry): each token must be at least 32 characters',
    );
    expect(() => loadConfig({ ADMIN_PORT: '3001', ADMIN_TOKENS: 'short' })).toThrow(
      /ADMIN_TOKENS \(the first entry\).*at least 32/,
    );
    expect(() => loadConfig({ ADMIN_PORT: '3001', ADMIN_TOKENS: `${token} x` })).toThrow(/ADMIN_TOKENS/);
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_SECONDS: '40', REQUEST_TIMEOUT_SECONDS: '30' })).toThrow(
      /HEADERS_TIMEOUT_SECONDS/,
    );
  });
});

describe('the documented configuration', () => {
  const read = (path: string) =>
    readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');
  it.each(variableNames)('%s is in the configuration table and in .env.example', (name) => {
    expect(read('docs/configuration.md')).toContain(`| \`${name}\``);
    expect(read('.env.example')).toMatch(new RegExp(`^#? ?${name}=`, 'm'));
  });

  it.each(variableNames)(
    '%s has the same default in docs/configuration.md, .env.example and config.ts',
    (name) => {
      const value = variableDefaults[name];
      const cell = new RegExp(`^\\| \`${name}\` +\\| ([^|]+?) +\\|`, 'm').exec(
        read('docs/configuration.md'),
      )?.[1];
      const line = new RegExp(`^(#? ?)${name}=(.*)$`, 'm').exec(read('.env.example'));
      if (value === undefined) {
        expect(cell).toMatch(/^unset/);
        expect(line?.[1]).toMatch(/^#/); // shown commented out: setting it changes behaviour
      } else if (value === '') {
        expect(cell).toMatch(/^empty/);
        expect(line?.[2]).toBe('');
      } else {
        expect(cell).toBe(`\`${value}\``);
        expect(line?.[1]).toBe('');
        expect(line?.[2]).toBe(value);
      }
    },
  );
});
