#!/usr/bin/env node
// `animal-store-keys`: the operators' key command, on the same DATABASE_URL as the server.
import '../dist/cli/keys.js';
