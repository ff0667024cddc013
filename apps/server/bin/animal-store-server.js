#!/usr/bin/env -S node --max-semi-space-size=8
// `animal-store-server`: runs the service (configuration from the environment; see the package README).
// --max-semi-space-size=8 sizes V8's young generation (16 MB per semi-space by default here): the flag is
// written only here (`pnpm start` runs this file, `pnpm bench` reads this line). Why 8: docs/decisions.md#semi-space.
import '../dist/main.js';
