import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { parseRedisUrl, redisHosts } from './redis-url.js';

describe('REDIS_URL: one server, Sentinels or a Cluster', () => {
  it('one server: the URL as given, TLS from rediss, the credentials decoded', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/2')).toEqual({
      topology: 'single',
      url: 'redis://127.0.0.1:6379/2',
      tls: false,
    });
    expect(parseRedisUrl('rediss://app:p%40ss@redis.example:6380')).toMatchObject({
      topology: 'single',
      tls: true,
      username: 'app',
      password: 'p@ss',
    });
    expect(parseRedisUrl('redis://:secret@h')).toMatchObject({ password: 'secret' });
    expect(parseRedisUrl('redis://:secret@h')).not.toHaveProperty('username');
  });

  it('Sentinels: every host (26379 when no port), the primary name, and their own credentials apart', () => {
    expect(
      parseRedisUrl(
        'rediss+sentinel://app:pw@s1:26380,s2,[::1]:26381/animal-store?sentinel_username=watch&sentinel_password=s%2Fp',
      ),
    ).toEqual({
      topology: 'sentinel',
      sentinels: [
        { host: 's1', port: 26_380 },
        { host: 's2', port: 26_379 },
        { host: '::1', port: 26_381 },
      ],
      primaryName: 'animal-store',
      username: 'app',
      password: 'pw',
      sentinelUsername: 'watch',
      sentinelPassword: 's/p',
      tls: true,
    });
  });

  it('a Cluster: its seed nodes (6379 when no port)', () => {
    expect(parseRedisUrl('redis+cluster://:pw@10.0.0.1:7000,10.0.0.2')).toEqual({
      topology: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 6379 },
      ],
      password: 'pw',
      tls: false,
    });
  });

  it.each([
    ['localhost:6379', 'must be'],
    ['http://h:6379', 'must be'],
    ['redis+sentry://h:1/x', 'must be'],
    ['redis://', 'names no host'],
    ['redis://a:1,b:2', 'redis+sentinel:// or redis+cluster://'],
    ['redis+sentinel://s1:26379,s2:26379', 'names no primary'],
    ['redis+sentinel://s1:26379/a/b', 'names no primary'],
    ['redis+sentinel://s1:26379/p?sentinel_pass=x', 'unknown parameter sentinel_pass'],
    ['redis+cluster://n1:7000/0', 'no database'],
    ['redis+cluster://n1:99999', 'not a host or host:port'],
    ['redis+cluster://n1:7000,,n2', 'not a host or host:port'],
  ])('%s is refused, saying why', (url, why) => {
    expect(() => parseRedisUrl(url)).toThrow(why);
  });

  it('a refusal names REDIS_URL and never repeats its password', () => {
    const load = () => loadConfig({ REDIS_URL: 'redis://:hunter2-secret@a:1,b:2' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('REDIS_URL');
    expect(load).not.toThrow('hunter2');
  });

  it.each([
    ['a / in the password', 'redis://app:hunter2/secret@h:6379'],
    ['a # in the password', 'redis://app:hunter2#secret@h:6379'],
    ['a ? in the password', 'redis+sentinel://app:hunter2?secret@s1,s2/animal-store'],
    ['an @ in the password', 'redis+cluster://app:hunter2@secret@n1:7000'],
  ])(
    '%s, not percent-encoded: refused as REDIS_URL, saying which to encode, repeating no credential',
    (_, url) => {
      const load = () => loadConfig({ REDIS_URL: url });
      expect(load).toThrow(
        /REDIS_URL: its user name or password holds a character that must be percent-encoded/,
      );
      expect(load).not.toThrow(/hunter2|secret|app|DATABASE_URL/);
    },
  );

  it('an @ in a Sentinel password given as a parameter is its value, not credentials', () => {
    expect(parseRedisUrl('redis+sentinel://s1/animal-store?sentinel_password=a@b')).toMatchObject({
      sentinelPassword: 'a@b',
    });
  });

  it('the configuration carries the address; messages name the hosts without credentials', () => {
    const config = loadConfig({ REDIS_URL: 'redis+sentinel://u:pw@s1,s2:26380/animal-store' });
    expect(config.redis?.address.topology).toBe('sentinel');
    expect(redisHosts(config.redis?.address as never)).toBe('s1:26379,s2:26380 (Sentinels of animal-store)');
    expect(redisHosts(parseRedisUrl('redis+cluster://:pw@[::1]:7000'))).toBe('[::1]:7000 (Cluster)');
    expect(redisHosts(parseRedisUrl('redis://:pw@h:6380'))).toBe('h:6380');
  });
});
