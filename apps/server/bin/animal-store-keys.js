#!/usr/bin/env node
// `animal-store-keys`: the operators' key command, on the same DATABASE_URL as the server. Node's compile
// cache first, as the server's: docs/decisions.md#compile-cache.
import module from 'node:module';

module.enableCompileCache?.();
await import('../dist/cli/keys.js');
