// The server package's public API: the app and HTTP server factories, the configuration loader, the
// contract and its validation as the service runs it, and the store engines with their limiter, for
// embedding the service or measuring it (packages/bench).
export { type AppDeps, createApp } from './api/app.js';
export { type Config, ConfigError, loadConfig } from './config.js';
export { loadContract } from './contract.js';
export { contractValidator } from './http/validation.js';
export { createRateLimiter, type RateLimiter } from './limits/policy.js';
export { type Plan, planQuotas, quotaFor } from './plans.js';
export { createServer, defaultConnectionLimits } from './server.js';
export { type Backend, openBackend } from './store/open.js';
export { StoreOpenError } from './store/open-error.js';
export { openSqliteStore } from './store/sqlite/index.js';
export type { ApiKey, KeyStore, PetStore, Store } from './store/store.js';
export { UsageMeter, usageFlushMs } from './usage/meter.js';
