// getKeyUsage: the key's running windows, its ban, and its requests per UTC day from `from` to `to`
// (today by default), this process's unwritten counts included (usage/report.ts).
import type { RequestHandler } from 'express';
import { loadConfig } from '../../config.js';
import { HttpError } from '../../http/http-error.js';
import { dayMs, utcDay } from '../../usage/days.js';
import { keyUsage } from '../../usage/report.js';
import { type AdminDeps, keyIdOf, noKey } from '../operation.js';

/** The longest range of days one usage request may ask for: USAGE_RETENTION_DAYS's default. */
export const maxUsageDays = loadConfig({}).usageRetentionDays;

export const getKeyUsage = ({ store, limiter, meter }: AdminDeps): RequestHandler =>
  async function getKeyUsage(req, res) {
    const id = keyIdOf(req);
    const key = await store.keys.get(id);
    if (!key) throw noKey(id);
    const today = utcDay(Date.now());
    const from = typeof req.query.from === 'string' ? req.query.from : today;
    const to = typeof req.query.to === 'string' ? req.query.to : today;
    const span = (Date.parse(to) - Date.parse(from)) / dayMs + 1;
    if (!(span >= 1)) throw new HttpError(400, `query.to (${to}) is before query.from (${from}).`);
    if (span > maxUsageDays)
      throw new HttpError(400, `At most ${maxUsageDays} days at once (asked: ${span}).`);
    res.json(
      await keyUsage(
        key,
        { from, to },
        { usage: store.usage, limiter, unwritten: meter?.unwritten(id, from, to) },
      ),
    );
  };
