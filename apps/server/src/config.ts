// The environment, parsed once and validated at start (zod); a bad value stops the process with a clear
// message instead of surfacing later. Every variable is documented in the README's configuration table and
// .env.example, with its default (a test checks both against `variableDefaults`).
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseRedisUrl, type RedisAddress } from './redis-url.js';

/** Default database file, relative to the working directory (never inside the installed package). */
export const defaultDatabaseUrl = 'data/animal-store.db';

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
const integer = (fallback: number, min: number, max: number) => wholeNumber(min, max).default(fallback);

const schema = z.object({
  PORT: integer(3000, 0, 65_535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().min(1).default(defaultDatabaseUrl),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.enum(['production', 'development', 'test']).default('development'),
  RATE_LIMIT_BAN_THRESHOLD: integer(10, 1, 1_000_000),
  RATE_LIMIT_BAN_SECONDS: integer(900, 1, 86_400 * 30),
  RATE_LIMIT_BAN_GRACE_SECONDS: integer(5, 0, 3_600),
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: integer(30, 1, 1_000_000),
  SHUTDOWN_GRACE_SECONDS: integer(10, 0, 600),
  // Express's 'trust proxy' setting: which proxies may set X-Forwarded-For (the per-address limit uses it).
  // `true`/`false`, a hop count, or a comma list of addresses, subnets and Express's names (loopback, ...).
  TRUST_PROXY: z
    .string()
    .min(1)
    .transform((value, ctx): TrustProxy => {
      if (value === 'true' || value === 'false') return value === 'true';
      if (/^[0-9]+$/.test(value)) return Number(value); // Express reads the string "1" as the address 0.0.0.1
      const entries = value.split(',').map((entry) => entry.trim());
      const bad = entries.find((entry) => !proxyNames.has(entry) && !isSubnet(entry));
      if (bad !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `"${bad}" is not true, false, a hop count, an address, a subnet or one of ${[...proxyNames].join(', ')}`,
        });
        return z.NEVER;
      }
      return entries;
    })
    .optional(),
  HEADERS_TIMEOUT_SECONDS: integer(10, 1, 600),
  REQUEST_TIMEOUT_SECONDS: integer(30, 1, 3_600),
  // Longer than clients keep idle connections (undici 4 s, many pools 5 s, load balancers 60 s), so that the
  // server is never the side closing a connection a client is about to reuse ('other side closed').
  KEEP_ALIVE_TIMEOUT_SECONDS: integer(65, 1, 600),
  MAX_CONNECTIONS: integer(1_000, 1, 1_000_000),
  MAX_CONNECTIONS_PER_ADDRESS: integer(256, 1, 1_000_000),
  MAX_PIPELINED_REQUESTS: integer(16, 1, 10_000),
  DATABASE_POOL_SIZE: integer(10, 1, 1_000),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(5_000, 1, 600_000),
  // Rate limits and bans in Redis (optional): one server, Sentinels or a Cluster (parseRedisUrl); keys
  // start with the prefix.
  REDIS_URL: z
    .string()
    .superRefine((url, context) => {
      try {
        parseRedisUrl(url);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    })
    .optional(),
  // Braces only as one Cluster hash tag (`{tenant}:`): a window and its hold must share a slot
  // (store/redis/counters.ts, heldName).
  REDIS_KEY_PREFIX: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[^{}]*(\{[^{}]+\}[^{}]*)?$/, 'braces only as one hash tag, e.g. {tenant}:')
    .default('animal-store:'),
  // A Redis command not answered within this time counts as Redis unreachable (the request goes on, on
  // per-instance limits): a stalled Redis must not stall the API.
  REDIS_COMMAND_TIMEOUT_MS: integer(500, 1, 60_000),
  // Worker processes sharing the port (node:cluster): a number, or `auto` for the available cores.
  WORKERS: z
    .string()
    .regex(/^(auto|[0-9]+)$/, 'must be a whole number or auto')
    .default('1')
    .transform((v) => (v === 'auto' ? availableParallelism() : Number(v)))
    .pipe(z.number().int().min(1).max(64)),
  // When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`.
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  // The admin API (keys, plans, usage) on a listener of its own: none unless ADMIN_PORT is set.
  ADMIN_PORT: wholeNumber(0, 65_535).optional(),
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  // The admin API's bearer tokens: a comma list (two at once while rotating), each at least 32 characters,
  // each named for the audit trail as `name:token` (a token without a name is named by its fingerprint).
  ADMIN_TOKENS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(
          z
            .string()
            .transform((entry) => {
              const named = /^([A-Za-z0-9._-]{1,64}):(.*)$/.exec(entry);
              return named ? { name: named[1], token: named[2] as string } : { token: entry };
            })
            .pipe(
              z.object({
                name: z.string().optional(),
                token: z
                  .string()
                  .min(32, 'each token must be at least 32 characters')
                  .regex(/^[!-~]+$/, 'tokens are printable ASCII without spaces'),
              }),
            ),
        )
        .superRefine((tokens, context) => {
          const names = tokens.map((t) => t.name).filter((name) => name !== undefined);
          const twice = names.find((name, i) => names.indexOf(name) !== i);
          if (twice) context.addIssue({ code: 'custom', message: `the name ${twice} is given twice` });
          // One token, one name: the audit trail names whoever holds a token by it.
          const secrets = tokens.map((t) => t.token);
          const shared = tokens.find((t, i) => secrets.indexOf(t.token) !== i);
          if (shared)
            context.addIssue({
              code: 'custom',
              message: `one token is given twice (${tokens
                .filter((t) => t.token === shared.token)
                .map((t) => t.name ?? 'unnamed')
                .join(' and ')}): each name needs a token of its own`,
            });
          // `token-<fingerprint>` names a token given without a name (admin/tokens.ts): nobody may take it.
          const taken = names.find((name) => /^token-[0-9a-f]{12}$/.test(name));
          if (taken)
            context.addIssue({
              code: 'custom',
              message: `the name ${taken} has the form token-<fingerprint>, kept for tokens given without a name`,
            });
        }),
    ),
  ADMIN_RATE_LIMIT_PER_MINUTE: integer(600, 1, 1_000_000),
  // Days of usage (per key and UTC day) kept in the store.
  USAGE_RETENTION_DAYS: integer(400, 1, 36_500),
  // Days of admin audit events kept in the store.
  AUDIT_RETENTION_DAYS: integer(400, 1, 36_500),
  // Browser origins allowed by CORS: a comma list of origins, `*`, or empty (off, the default).
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.union([z.literal('*'), z.url().regex(/^https?:\/\/[^/]+$/, 'an origin: scheme://host[:port]')]),
      ),
    ),
});

/** Every variable the service reads (documented in the README's table and .env.example; a test checks). */
export const variableNames = Object.keys(schema.shape);

/** Each variable's default as it would be written in the environment (undefined: unset), from the schema. */
export const variableDefaults: Record<string, string | undefined> = Object.fromEntries(
  Object.entries(schema.shape).map(([name, field]) => {
    const { data } = field.safeParse(undefined);
    return [name, data === undefined ? undefined : Array.isArray(data) ? data.join(',') : String(data)];
  }),
);

export type Limits = {
  /**
   * A key is banned for `seconds` past `threshold` refusals counted within a minute; refusals within
   * `graceSeconds` of the first an instance answered for the key's refusal count none (policy.ts).
   */
  ban: { threshold: number; seconds: number; graceSeconds: number };
  anonymousPerMinute: number;
};

/** How the HTTP server bounds what clients can hold (see server.ts). */
export type ConnectionLimits = {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** Open connections from one peer address; a trusted proxy's (`trustProxy`) are not capped per address. */
  maxConnectionsPerAddress: number;
  /** TRUST_PROXY: the peers that carry many clients' connections (proxies), exempt from the per-address cap. */
  trustProxy: TrustProxy | undefined;
  maxPipelinedRequests: number;
};

/** Where the store lives: one SQLite file (the default), or a PostgreSQL database. */
export type Database =
  | { engine: 'sqlite'; path: string }
  | { engine: 'postgres'; url: string; poolSize: number; statementTimeoutMs: number };

export type Config = {
  port: number;
  host: string;
  database: Database;
  /** Rate limits and bans in Redis when set; otherwise in the database. */
  redis: RedisConfig | undefined;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  production: boolean;
  limits: Limits;
  connections: ConnectionLimits;
  shutdownGraceMs: number;
  /** Express 'trust proxy' value (e.g. `loopback`, a hop count, subnets); undefined trusts no proxy. */
  trustProxy: TrustProxy | undefined;
  /** Origins allowed by CORS (`*` for any); empty: CORS off. */
  corsOrigins: string[];
  /** Bearer token for GET /metrics; undefined: open. */
  metricsToken: string | undefined;
  /** Worker processes sharing the port; 1: no cluster. */
  workers: number;
  /** The admin API's listener and tokens; undefined: no admin API. */
  admin: AdminConfig | undefined;
  /** Days of usage kept in the store. */
  usageRetentionDays: number;
  /** Days of admin audit events kept in the store. */
  auditRetentionDays: number;
};

/** An admin token and the name the audit trail gives whoever holds it (absent: named by its fingerprint). */
export type AdminToken = { name?: string | undefined; token: string };
export type AdminConfig = { port: number; host: string; tokens: AdminToken[]; perMinute: number };

export type RedisConfig = { address: RedisAddress; keyPrefix: string; commandTimeoutMs: number };

/** The one form of a configuration error: a heading, then one indented line per problem. */
const invalid = (...problems: string[]) => `Invalid configuration:\n  ${problems.join('\n  ')}`;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** What Express's 'trust proxy' takes: all or none, a hop count, or addresses, subnets and names. */
export type TrustProxy = boolean | number | string[];
const proxyNames = new Set(['loopback', 'linklocal', 'uniquelocal']);
/** An IPv4 or IPv6 address, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`). */
function isSubnet(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * A path, `file:` or `sqlite:` URL → the SQLite file; `postgres://` or `postgresql://` → PostgreSQL; any
 * other scheme is refused, never taken as a path.
 */
function database(e: z.infer<typeof schema>): Database {
  const url = e.DATABASE_URL;
  if (/^postgres(?:ql)?:\/\//.test(url)) {
    return {
      engine: 'postgres',
      url,
      poolSize: e.DATABASE_POOL_SIZE,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    };
  }
  if (url === ':memory:') return { engine: 'sqlite', path: url };
  const prefixed = /^(?:file|sqlite):(?:\/\/(?=\/))?/.exec(url);
  if (prefixed) return { engine: 'sqlite', path: resolve(decodeURIComponent(url.slice(prefixed[0].length))) };
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1];
  if (scheme) {
    throw new ConfigError(
      invalid(
        `DATABASE_URL: unsupported scheme "${scheme}:"; use a file path, file:, sqlite:, postgres: or postgresql:`,
      ),
    );
  }
  return { engine: 'sqlite', path: resolve(url) };
}

const ordinals = ['first', 'second', 'third', 'fourth', 'fifth'];
/** A variable, and for a comma list the entry in words: `ADMIN_TOKENS (the second entry)`, not `ADMIN_TOKENS.1`. */
function where(path: PropertyKey[]): string {
  const [name, index] = path;
  if (typeof index !== 'number') return String(name);
  return `${String(name)} (${ordinals[index] ? `the ${ordinals[index]} entry` : `entry ${index + 1}`})`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${where(issue.path)}: ${issue.message}`);
    throw new ConfigError(invalid(...problems));
  }
  const e = parsed.data;
  if (e.ADMIN_PORT !== undefined && e.ADMIN_TOKENS.length === 0) {
    throw new ConfigError(
      invalid(
        'ADMIN_TOKENS: required when ADMIN_PORT is set (a comma list of tokens of at least 32 characters, each as name:token, e.g. billing:$(openssl rand -hex 32))',
      ),
    );
  }
  if (e.HEADERS_TIMEOUT_SECONDS > e.REQUEST_TIMEOUT_SECONDS) {
    throw new ConfigError(
      invalid(
        'HEADERS_TIMEOUT_SECONDS: must not exceed REQUEST_TIMEOUT_SECONDS (the headers are part of the request)',
      ),
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    database: database(e),
    redis: e.REDIS_URL
      ? {
          address: parseRedisUrl(e.REDIS_URL),
          keyPrefix: e.REDIS_KEY_PREFIX,
          commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
        }
      : undefined,
    logLevel: e.LOG_LEVEL,
    production: e.NODE_ENV === 'production',
    limits: {
      ban: {
        threshold: e.RATE_LIMIT_BAN_THRESHOLD,
        seconds: e.RATE_LIMIT_BAN_SECONDS,
        graceSeconds: e.RATE_LIMIT_BAN_GRACE_SECONDS,
      },
      anonymousPerMinute: e.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
    },
    connections: {
      headersTimeoutMs: e.HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: e.REQUEST_TIMEOUT_SECONDS * 1000,
      keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
      maxConnections: e.MAX_CONNECTIONS,
      maxConnectionsPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
      trustProxy: e.TRUST_PROXY,
      maxPipelinedRequests: e.MAX_PIPELINED_REQUESTS,
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_SECONDS * 1000,
    trustProxy: e.TRUST_PROXY,
    corsOrigins: e.CORS_ORIGINS,
    metricsToken: e.METRICS_TOKEN,
    workers: e.WORKERS,
    admin:
      e.ADMIN_PORT === undefined
        ? undefined
        : {
            port: e.ADMIN_PORT,
            host: e.ADMIN_HOST,
            tokens: e.ADMIN_TOKENS,
            perMinute: e.ADMIN_RATE_LIMIT_PER_MINUTE,
          },
    usageRetentionDays: e.USAGE_RETENTION_DAYS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
  };
}
