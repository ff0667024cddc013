#!/usr/bin/env -S node --max-semi-space-size=8
// `animal-store-server`: runs the service (configuration from the environment; see the package README).
// --max-semi-space-size=8 sizes V8's young generation (16 MB per semi-space by default here): the flag is
// written only here (`pnpm start` runs this file, `pnpm bench` reads this line). Why 8: docs/decisions.md#semi-space.
// Node's compile cache (22.1 and later) before the service's modules load: docs/decisions.md#compile-cache.
import module from 'node:module';

module.enableCompileCache?.();
await import('../dist/main.js');
