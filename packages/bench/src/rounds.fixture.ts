// A round of a contestant as the bench measures it (measure.ts), for the tests that compare rounds: only its
// throughput and CPU a request matter to them. Not built (tsconfig.build.json).
import type { Measure } from './measure.js';

export const round = (reqPerSec: number, cpuUsPerRequest: number): Measure => ({
  reqPerSec,
  cpuUsPerRequest,
  p50: 1,
  p99: 2,
  non2xx: 0,
  errors: 0,
  coresBusy: { target: 1, generator: 0.3, others: 0, steal: 0 },
});
