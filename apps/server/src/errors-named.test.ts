// Every error class of the server names itself, so that a log record or a stack trace says which failure it
// was (a class without `name` logs as plain `Error`).
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config.js';
import { HttpError } from './http/http-error.js';
import { StartError } from './lifecycle.js';
import { QuotaError } from './plans.js';
import { StoreOpenError } from './store/open-error.js';
import { StoreUnavailableError, StoreUnwritableError } from './store/unavailable.js';

describe('error classes', () => {
  it.each<[string, Error]>([
    ['HttpError', new HttpError(404, 'Pet 7 was not found.')],
    ['ConfigError', new ConfigError('PORT: not a port')],
    ['StartError', new StartError('PORT', 'in use')],
    ['QuotaError', new QuotaError('perMinute above perDay')],
    ['StoreOpenError', new StoreOpenError('DATABASE_URL: cannot open')],
    ['StoreUnavailableError', new StoreUnavailableError('the store timed out')],
    ['StoreUnwritableError', new StoreUnwritableError('disk_full', 'the disk is full')],
  ])('%s says its name, in String(error) too', (name, error) => {
    expect(error.name).toBe(name);
    expect(String(error)).toMatch(new RegExp(`^${name}: `));
  });
});
