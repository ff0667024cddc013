#!/usr/bin/env node
// `animal-store-server`: runs the service (configuration from the environment; see the package README).
import '../dist/main.js';
