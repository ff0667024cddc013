// REDIS_URL: where Redis is, one server, a Sentinel-watched primary, or a Cluster, told apart by the
// URL's scheme (docs/scaling-out.md#redis-topologies):
//   redis://[user:password@]host:port[/db]                         one server
//   redis+sentinel://[user:password@]host:port,host:port/primary   the primary the Sentinels name `primary`
//   redis+cluster://[user:password@]host:port,host:port            a Cluster, from any of its nodes
// `rediss` instead of `redis` in each: TLS. The credentials are those of the data nodes; Sentinels with their
// own take `?sentinel_username=…&sentinel_password=…`. Written by hand: docs/decisions.md#redis-url.

export type RedisNode = { host: string; port: number };
type Credentials = { username?: string; password?: string; tls: boolean };

export type RedisAddress =
  | ({ topology: 'single'; url: string } & Credentials)
  | ({
      topology: 'sentinel';
      sentinels: RedisNode[];
      primaryName: string;
      sentinelUsername?: string;
      sentinelPassword?: string;
    } & Credentials)
  | ({ topology: 'cluster'; nodes: RedisNode[] } & Credentials);

/** The form REDIS_URL takes, for messages. */
export const redisUrlForms =
  'redis://host:port, redis+sentinel://host:port,host:port/primary or redis+cluster://host:port,host:port (rediss for TLS)';

const shape = /^(rediss?)(?:\+(sentinel|cluster))?:\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?(?:\?([^#]*))?$/;
const defaultPort = { single: 6379, sentinel: 26379, cluster: 6379 } as const;

const decoded = (text: string | undefined) => (text ? decodeURIComponent(text) : undefined);

/**
 * Whether credentials hold a character that ends them early (`/`, `?`, `#`, or a second `@`): the host part
 * would then start inside the password, and a message naming it would print part of it. Told by an `@`
 * past the first `/`, `?` or `#` (except in a query parameter's value, where sentinel_password may hold
 * one), or two in the host part.
 */
function unencodedCredentials(url: string): boolean {
  const rest = url.replace(/^[a-z+]+:\/\//i, '');
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  if ((authority.match(/@/g) ?? []).length > 1) return true;
  if (end < 0) return false;
  const after = rest.slice(end);
  const at = after.indexOf('@');
  if (at < 0) return false;
  if (after.includes('#')) return true; // REDIS_URL never has a fragment: the '#' was in the password
  const query = after.indexOf('?');
  const value = query < 0 ? -1 : after.indexOf('=', query);
  return value < 0 || at < value;
}

function nodes(list: string, port: number): RedisNode[] {
  return list.split(',').map((entry) => {
    // host, host:port, [v6], [v6]:port
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry.trim());
    const host = match?.[1];
    const at = match?.[2] === undefined ? port : Number(match[2]);
    if (!host || at < 1 || at > 65_535) throw new Error(`"${entry}" is not a host or host:port`);
    return { host: host.replace(/^\[|\]$/g, ''), port: at };
  });
}

/** REDIS_URL read, or an Error saying what is wrong with it (never repeating its password). */
export function parseRedisUrl(url: string): RedisAddress {
  if (unencodedCredentials(url)) {
    throw new Error(
      'its user name or password holds a character that must be percent-encoded there: / ? # @ as %2F %3F %23 %40',
    );
  }
  const match = shape.exec(url);
  if (!match) throw new Error(`must be ${redisUrlForms}`);
  const [, scheme, kind, userinfo, hosts, path = '', query = ''] = match;
  const [username, password] = userinfo === undefined ? [] : userinfo.split(/:(.*)/s, 2);
  const credentials: Credentials = {
    tls: scheme === 'rediss',
    ...(decoded(username) && { username: decoded(username) }),
    ...(decoded(password) && { password: decoded(password) }),
  };
  if (!hosts) throw new Error('names no host');
  if (!kind) {
    if (hosts.includes(','))
      throw new Error('names several hosts: use redis+sentinel:// or redis+cluster://');
    nodes(hosts, defaultPort.single);
    return { topology: 'single', url, ...credentials };
  }
  if (kind === 'cluster') {
    if (path.replace(/^\//, '')) throw new Error('a Cluster has no database number or name');
    return { topology: 'cluster', nodes: nodes(hosts, defaultPort.cluster), ...credentials };
  }
  const primaryName = decoded(path.replace(/^\//, ''));
  if (!primaryName || primaryName.includes('/')) {
    throw new Error(
      'names no primary: redis+sentinel://host:port,host:port/<the primary name Sentinels know>',
    );
  }
  const params = new URLSearchParams(query);
  const unknown = [...params.keys()].filter((name) => !/^sentinel_(username|password)$/.test(name));
  if (unknown.length)
    throw new Error(`unknown parameter ${unknown[0]} (sentinel_username, sentinel_password)`);
  return {
    topology: 'sentinel',
    sentinels: nodes(hosts, defaultPort.sentinel),
    primaryName,
    ...(params.get('sentinel_username') && { sentinelUsername: params.get('sentinel_username') as string }),
    ...(params.get('sentinel_password') && { sentinelPassword: params.get('sentinel_password') as string }),
    ...credentials,
  };
}

/** The URL's hosts without credentials, for messages and logs. */
export function redisHosts(address: RedisAddress): string {
  const list = (nodes: RedisNode[]) =>
    nodes.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(',');
  if (address.topology === 'sentinel')
    return `${list(address.sentinels)} (Sentinels of ${address.primaryName})`;
  if (address.topology === 'cluster') return `${list(address.nodes)} (Cluster)`;
  return new URL(address.url).host;
}
