#!/usr/bin/env node
// The operators' key command: create, list and revoke API keys in the server's database
// (same DATABASE_URL as the server). Arguments parsed by commander.
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { planNames } from '../limits/plans.js';
import { openDatabase } from '../store/database.js';
import { type ApiKey, createKeyStore } from '../store/keys.js';

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
};
const out = (text: string): void => void process.stdout.write(`${text}\n`);
const keyStore = () => createKeyStore(openDatabase(loadConfig().databasePath));
const describe = (k: ApiKey) => ({
  id: k.id,
  plan: k.plan,
  perMinute: k.quota.perMinute,
  perDay: k.quota.perDay,
  label: k.label,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
});

const program = new Command('keys').description('Manage Animal Store API keys (uses DATABASE_URL)');

program
  .command('create')
  .description('create a key and print it once')
  .addOption(
    new Option('--plan <plan>', 'the plan the key is bound to').choices(planNames).makeOptionMandatory(),
  )
  .option('--per-minute <n>', 'requests per minute (enterprise only, required there)', positive)
  .option('--per-day <n>', 'requests per day (enterprise only, required there)', positive)
  .option('--label <text>', 'a note for operators, e.g. who holds the key')
  .option('--json', 'print one JSON object')
  .action(
    (options: {
      plan: ApiKey['plan'];
      perMinute?: number;
      perDay?: number;
      label?: string;
      json?: boolean;
    }) => {
      const custom = options.perMinute !== undefined || options.perDay !== undefined;
      if (
        options.plan === 'enterprise' &&
        (options.perMinute === undefined || options.perDay === undefined)
      ) {
        program.error('error: enterprise keys need --per-minute and --per-day');
      }
      if (options.plan !== 'enterprise' && custom) {
        program.error(
          `error: --per-minute and --per-day apply to enterprise keys only; ${options.plan} has fixed limits`,
        );
      }
      const created = keyStore().create({
        plan: options.plan,
        ...(options.plan === 'enterprise' && {
          quota: { perMinute: options.perMinute as number, perDay: options.perDay as number },
        }),
        ...(options.label !== undefined && { label: options.label }),
      });
      if (options.json) return out(JSON.stringify({ ...describe(created), key: created.key }));
      out(
        `Created key ${created.id} (${created.plan}: ${created.quota.perMinute}/min, ${created.quota.perDay}/day).`,
      );
      out(`API key, shown only now:\n\n  ${created.key}\n`);
    },
  );

program
  .command('list')
  .description('list keys (never their secrets)')
  .option('--json', 'print a JSON array')
  .action((options: { json?: boolean }) => {
    const keys = keyStore().list().map(describe);
    if (options.json) return out(JSON.stringify(keys));
    if (keys.length === 0) return out('No keys.');
    for (const k of keys) {
      const state = k.revokedAt ? `revoked ${k.revokedAt}` : 'active';
      out(
        `${k.id}  ${k.plan.padEnd(10)} ${k.perMinute}/min ${k.perDay}/day  ${state}  ${k.label ?? ''}`.trimEnd(),
      );
    }
  });

program
  .command('revoke')
  .description('revoke a key: it is refused from the next request on')
  .argument('<id>', 'the key id shown by `keys list`')
  .action((id: string) => {
    if (!keyStore().revoke(id)) program.error(`error: no active key with id ${id}`);
    out(`Revoked key ${id}.`);
  });

try {
  program.parse();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
