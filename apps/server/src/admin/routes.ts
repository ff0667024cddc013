// The admin API's operations (spec/admin), one handler per file under keys/, mounted at the contract's
// paths. Requests arrive authenticated and validated against the admin contract (admin/app.ts); every
// change is audited.
import { Router } from 'express';
import { listAuditEvents } from './audit-events.js';
import { createKey } from './keys/create-key.js';
import { getKey } from './keys/get-key.js';
import { getKeyUsage } from './keys/get-key-usage.js';
import { listKeys } from './keys/list-keys.js';
import { revokeKey } from './keys/revoke-key.js';
import { rotateKey } from './keys/rotate-key.js';
import { unbanKey } from './keys/unban-key.js';
import { updateKey } from './keys/update-key.js';
import type { AdminDeps } from './operation.js';

export type { AdminDeps } from './operation.js';

export function adminRoutes(deps: AdminDeps): Router {
  return Router()
    .get('/keys', listKeys(deps))
    .post('/keys', createKey(deps))
    .get('/keys/:keyId', getKey(deps))
    .patch('/keys/:keyId', updateKey(deps))
    .post('/keys/:keyId/rotate', rotateKey(deps))
    .post('/keys/:keyId/revoke', revokeKey(deps))
    .post('/keys/:keyId/unban', unbanKey(deps))
    .get('/keys/:keyId/usage', getKeyUsage(deps))
    .get('/audit-events', listAuditEvents(deps));
}
