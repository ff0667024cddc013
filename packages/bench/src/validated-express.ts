// Bare Express with the one layer issue 58 keeps besides Express itself: the contract's validation of every
// request and every response, exactly as the server runs it (its own contractValidator: the patched
// express-openapi-validator, its options, the bundled contract). No limits, no log, no metrics. Its
// distance from bare Express is the part of the full server's that no saving elsewhere can close.
import { contractValidator, loadContract } from '@animal-store/server';
import { jobApp, listen } from './express-job.js';

listen(jobApp({ inner: contractValidator(loadContract(), () => {}) }));
