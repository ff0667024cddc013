// The operators' key command: create, list, update, revoke, rotate and unban API keys, and read their usage,
// in the server's store (same DATABASE_URL, and REDIS_URL for bans, as the server). Arguments parsed by commander.
import '../runtime.js';
import '../env-file.js';
import { existsSync } from 'node:fs';
import type { KeyUsage } from '@animal-store/spec/admin';
import { Command, InvalidArgumentError, Option } from 'commander';
import { pino } from 'pino';
import { z } from 'zod';
import { propagationText } from '../bounds.js';
import { ConfigError, loadConfig } from '../config.js';
import { createRateLimiter } from '../limits/policy.js';
import { type Plan, planNames, QuotaError, quotaFor, type WindowName } from '../plans.js';
import { futureExpiry, keyAfter, termsDiffer } from '../store/key-change.js';
import { openBackend } from '../store/open.js';
import { StoreOpenError } from '../store/open-error.js';
import { shownKey } from '../store/shown-key.js';
import type { ApiKey } from '../store/store.js';
import { dayMs, utcDay } from '../usage/days.js';
import { keyUsage } from '../usage/report.js';
import { serverVersion } from '../version.js';

/** A commander parser for a whole number of at least `min`; `message` says what is expected. */
const integerAtLeast = (min: number, message: string) => (value: string) => {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(message);
  return n;
};
const positive = integerAtLeast(1, 'must be a positive integer');
/** A commander parser for a UTC day, YYYY-MM-DD. */
const day = (value: string) => {
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(value) ||
    Number.isNaN(Date.parse(value)) ||
    utcDay(Date.parse(value)) !== value
  ) {
    throw new InvalidArgumentError('must be a day written YYYY-MM-DD');
  }
  return value;
};
const seconds = integerAtLeast(0, 'must be a whole number of seconds (0 or more)');
/**
 * An instant as RFC 3339 writes it, with its zone, on a day the calendar has: what the admin API's
 * `format: date-time` takes (Date.parse takes 2027-02-30 as 2 March).
 */
const instant = z.iso.datetime({ offset: true });
/** A commander parser for an expiry: an instant to come, ISO 8601 with its zone ("" is left as it is). */
const expiry = (value: string) => {
  if (value === '') return value;
  if (!instant.safeParse(value).success) {
    throw new InvalidArgumentError(
      'must be a real instant written ISO 8601 with its zone, e.g. 2027-01-31T00:00:00Z',
    );
  }
  const at = futureExpiry(value);
  if (!at) throw new InvalidArgumentError('must be in the future');
  return at;
};
const out = (text: string): void => void process.stdout.write(`${text}\n`);
/** Rows as aligned columns under a header row: for people (`--json` is for programs). */
const table = (header: string[], rows: string[][]): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};
/**
 * The store of DATABASE_URL (any engine) and the limiter of its counters (bans). Every command but
 * `create` works on an existing store only: a mistyped path must not create an empty database.
 */
const openStore = async (mustExist = true) => {
  const { database, redis, limits } = loadConfig();
  if (
    mustExist &&
    database.engine === 'sqlite' &&
    database.path !== ':memory:' &&
    !existsSync(database.path)
  ) {
    throw new StoreOpenError(
      `DATABASE_URL: there is no database at ${database.path}; check the path (keys create makes a new one).`,
    );
  }
  const backend = await openBackend(database, redis, pino({ level: 'silent' }));
  const limiter = createRateLimiter(backend.counters, limits);
  return {
    keys: backend.store.keys,
    usage: backend.store.usage,
    limiter,
    close: async () => {
      await limiter.close();
      await backend.close();
    },
  };
};
const keyRecord = (k: ApiKey) => ({ ...shownKey(k), perMinute: k.quota.perMinute, perDay: k.quota.perDay });

const program = new Command('keys')
  .description('Manage Animal Store API keys (uses DATABASE_URL, and .env in the working directory)')
  .version(serverVersion);

program
  .command('create')
  .description('create a key and print it once')
  .addOption(
    new Option('--plan <plan>', 'the plan the key is bound to').choices(planNames).makeOptionMandatory(),
  )
  .option('--per-minute <n>', 'requests per minute (enterprise only, required there)', positive)
  .option('--per-day <n>', 'requests per day (enterprise only, required there)', positive)
  .option('--label <text>', 'a note for operators, e.g. who holds the key')
  .option('--customer <id>', 'the customer the key belongs to, as the billing system names them')
  .option('--json', 'print one JSON object')
  .action(
    async (options: {
      plan: Plan;
      perMinute?: number;
      perDay?: number;
      label?: string;
      customer?: string;
      json?: boolean;
    }) => {
      const quota = quotaFor(options.plan, { perMinute: options.perMinute, perDay: options.perDay });
      const store = await openStore(false);
      const created = await store.keys.create({
        plan: options.plan,
        quota,
        label: options.label ?? null,
        customerId: options.customer ?? null,
      });
      await store.close();
      if (options.json) return out(JSON.stringify({ ...keyRecord(created), key: created.key }));
      out(
        `Created key ${created.id} (${created.plan}: ${created.quota.perMinute}/min, ${created.quota.perDay}/day).`,
      );
      out(`API key, shown only now:\n\n  ${created.key}\n`);
    },
  );

program
  .command('list')
  .description(
    'list keys (never their secrets): plan, limits, label, created, state (revoked, disabled, expired, banned), last used',
  )
  .option('--json', 'print a JSON array')
  .action(async (options: { json?: boolean }) => {
    const store = await openStore();
    const keys = await Promise.all(
      (await store.keys.list()).map(async (k) => {
        const banMs = k.revokedAt ? 0 : await store.limiter.banRemaining(k.id);
        return {
          ...keyRecord(k),
          bannedUntil: banMs > 0 ? new Date(Date.now() + banMs).toISOString() : null,
        };
      }),
    );
    await store.close();
    if (options.json) return out(JSON.stringify(keys));
    if (keys.length === 0) return out('No keys.');
    const rows = keys.map((k) => [
      k.id,
      k.plan,
      String(k.perMinute),
      String(k.perDay),
      k.createdAt,
      k.revokedAt
        ? `revoked ${k.revokedAt}`
        : k.disabledAt
          ? `disabled since ${k.disabledAt}`
          : k.expiresAt && k.expiresAt <= new Date().toISOString()
            ? `expired ${k.expiresAt}`
            : k.bannedUntil
              ? `banned until ${k.bannedUntil}`
              : 'active',
      k.lastUsedAt ?? 'never',
      k.label ?? '',
    ]);
    out(table(['ID', 'PLAN', 'PER MINUTE', 'PER DAY', 'CREATED', 'STATE', 'LAST USED', 'LABEL'], rows));
  });

program
  .command('update')
  .description(
    `change a key's plan, limits, label, customer, expiry, or disable it: every running instance applies it within ${propagationText}, and the running windows keep their counts; a new plan or new limits end the key's ban, and no instance bans it again while they propagate`,
  )
  .argument('<id>', 'the key id shown by `keys list`')
  .addOption(new Option('--plan <plan>', 'the new plan').choices(planNames))
  .option('--per-minute <n>', 'requests per minute (enterprise only)', positive)
  .option('--per-day <n>', 'requests per day (enterprise only)', positive)
  .option('--label <text>', 'a new note for operators ("" clears it)')
  .option('--customer <id>', 'a new customer id ("" clears it)')
  .option('--expires-at <instant>', 'when the key stops working, ISO 8601 ("" clears it)', expiry)
  .addOption(new Option('--disable', 'refuse the key (401 key_disabled) until --enable').conflicts('enable'))
  .option('--enable', 'let a disabled key in again')
  .option('--json', 'print one JSON object')
  .action(
    async (
      id: string,
      options: {
        plan?: Plan;
        perMinute?: number;
        perDay?: number;
        label?: string;
        customer?: string;
        expiresAt?: string;
        disable?: boolean;
        enable?: boolean;
        json?: boolean;
      },
    ) => {
      const store = await openStore();
      try {
        const current = await store.keys.get(id);
        if (!current || current.revokedAt) return program.error(`error: no active key with id ${id}`);
        const custom = options.perMinute !== undefined || options.perDay !== undefined;
        const cleared = (value: string | undefined) => (value === '' ? null : value);
        const updated = await store.keys.update(
          id,
          keyAfter(current, {
            plan: options.plan,
            limits: custom ? { perMinute: options.perMinute, perDay: options.perDay } : undefined,
            label: cleared(options.label),
            customerId: cleared(options.customer),
            expiresAt: cleared(options.expiresAt ?? undefined), // commander passes "" without parsing it
            disabled: options.disable ? true : options.enable ? false : undefined,
          }),
        );
        if (!updated) return program.error(`error: no active key with id ${id}`);
        if (termsDiffer(current, updated)) await store.limiter.termsChanged(id);
        if (options.json) return out(JSON.stringify(keyRecord(updated)));
        const state = [
          updated.disabledAt && `disabled since ${updated.disabledAt}`,
          updated.expiresAt && `expires ${updated.expiresAt}`,
        ].filter(Boolean);
        out(
          `Updated key ${id}: ${updated.plan} (${updated.quota.perMinute}/min, ${updated.quota.perDay}/day)${state.length > 0 ? `, ${state.join(', ')}` : ''}; running instances apply it within ${propagationText}.`,
        );
      } finally {
        await store.close();
      }
    },
  );

program
  .command('usage')
  .description("a key's running windows, its ban, and its requests per UTC day (admitted, limited, banned)")
  .argument('<id>', 'the key id shown by `keys list`')
  .option('--from <date>', 'the first UTC day, YYYY-MM-DD (default: 30 days ago)', day)
  .option('--to <date>', 'the last UTC day, YYYY-MM-DD (default: today)', day)
  .option('--json', 'print one JSON object')
  .action(async (id: string, options: { from?: string; to?: string; json?: boolean }) => {
    const store = await openStore();
    const now = Date.now();
    const to = options.to ?? utcDay(now);
    const from = options.from ?? utcDay(now - 30 * dayMs);
    let report: KeyUsage;
    try {
      const key = await store.keys.get(id);
      if (!key) return program.error(`error: no key with id ${id}`);
      report = await keyUsage(key, { from, to }, store);
    } finally {
      await store.close();
    }
    if (options.json) return out(JSON.stringify(report));
    out(
      table(
        ['WINDOW', 'LIMIT', 'USED', 'RESERVED', 'REMAINING', 'RESETS'],
        report.windows.map((w) => [
          w.name,
          String(w.limit),
          String(w.used),
          String(w.reserved),
          String(w.remaining),
          w.resetAt ?? '-',
        ]),
      ),
    );
    out(report.bannedUntil ? `\nBanned until ${report.bannedUntil}.` : '\nNot banned.');
    out(`\nRequests from ${from} to ${to} (UTC days; written by each instance every ${propagationText}):\n`);
    out(
      report.days.length === 0
        ? 'None.'
        : table(
            ['DAY', 'ADMITTED', 'LIMITED', 'BANNED'],
            report.days.map((d) => [d.date, String(d.admitted), String(d.limited), String(d.banned)]),
          ),
    );
  });

program
  .command('revoke')
  .description(`revoke a key: every running instance refuses it within ${propagationText}`)
  .argument('<id>', 'the key id shown by `keys list`')
  .action(async (id: string) => {
    const store = await openStore();
    const revoked = await store.keys.revoke(id);
    await store.close();
    if (!revoked) program.error(`error: no active key with id ${id}`);
    out(`Revoked key ${id}.`);
  });

program
  .command('unban')
  .description(`end a temporary ban now (every instance stops refusing the key within ${propagationText})`)
  .argument('<id>', 'the key id shown by `keys list`')
  .addOption(
    new Option(
      '--reset <windows...>',
      'also start these windows over, with the whole limit (a used-up window refuses the key until it ends)',
    ).choices(['minute', 'day']),
  )
  .action(async (id: string, options: { reset?: WindowName[] }) => {
    const store = await openStore();
    const known = (await store.keys.list()).some((k) => k.id === id);
    const reset = [...new Set(options.reset ?? [])]; // named once in the line it prints
    if (known) {
      await store.limiter.unban(id);
      if (reset.length > 0) await store.limiter.resetWindows(id, reset);
    }
    await store.close();
    if (!known) program.error(`error: no key with id ${id}`);
    out(`Unbanned key ${id}${reset.length > 0 ? `; its ${reset.join(' and ')} started over` : ''}.`);
  });

program
  .command('rotate')
  .description('give a key a new secret (same id, plan and limits) and print it once')
  .argument('<id>', 'the key id shown by `keys list`')
  .option(
    '--grace-seconds <n>',
    `how long the old secret keeps working (default 0: no longer; running instances forget it within ${propagationText})`,
    seconds,
  )
  .option('--json', 'print one JSON object')
  .action(async (id: string, options: { graceSeconds?: number; json?: boolean }) => {
    const store = await openStore();
    const rotated = await store.keys.rotate(id, options.graceSeconds ?? 0);
    await store.close();
    if (!rotated) return program.error(`error: no active key with id ${id}`);
    const { key, previousValidUntil } = rotated;
    const grace = previousValidUntil ? `until ${previousValidUntil}` : 'no longer';
    if (options.json)
      return out(
        JSON.stringify({ id, key, previousValidForSeconds: options.graceSeconds ?? 0, previousValidUntil }),
      );
    out(`Rotated key ${id}; the old secret works ${grace}.`);
    out(`API key, shown only now:\n\n  ${key}\n`);
  });

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof QuotaError) program.error(`error: ${error.message}`);
  if (!(error instanceof ConfigError || error instanceof StoreOpenError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
