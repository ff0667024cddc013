// The environment, parsed once and validated at start (zod); a bad value stops the process with a clear
// message instead of surfacing later.
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** Default database file: under the server package's data folder (git-ignored). */
export const defaultDatabasePath = fileURLToPath(new URL('../data/animal-store.db', import.meta.url));

const integer = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const schema = z.object({
  PORT: integer(3000, 0, 65_535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().min(1).default(defaultDatabasePath),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().default('development'),
  RATE_LIMIT_BAN_THRESHOLD: integer(10, 1, 1_000_000),
  RATE_LIMIT_BAN_SECONDS: integer(900, 1, 86_400 * 30),
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: integer(30, 1, 1_000_000),
  SHUTDOWN_GRACE_SECONDS: integer(10, 0, 600),
  // Express's 'trust proxy' setting: which proxies may set X-Forwarded-For (the per-address limit uses it).
  TRUST_PROXY: z.string().min(1).optional(),
});

export type Config = {
  port: number;
  host: string;
  databasePath: string;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  production: boolean;
  limits: { ban: { threshold: number; seconds: number }; anonymousPerMinute: number };
  shutdownGraceMs: number;
  /** Express 'trust proxy' value (e.g. `loopback`, `1`, a subnet); undefined trusts no proxy. */
  trustProxy: string | undefined;
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databasePath: e.DATABASE_URL.replace(/^file:/, ''),
    logLevel: e.LOG_LEVEL,
    production: e.NODE_ENV === 'production',
    limits: {
      ban: { threshold: e.RATE_LIMIT_BAN_THRESHOLD, seconds: e.RATE_LIMIT_BAN_SECONDS },
      anonymousPerMinute: e.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
    },
    shutdownGraceMs: e.SHUTDOWN_GRACE_SECONDS * 1000,
    trustProxy: e.TRUST_PROXY,
  };
}
