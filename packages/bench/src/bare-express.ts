// Bare Express: the floor's work (job.ts) inside Express 5 with express.json, and nothing of ours: no
// contract validation, no rate limiting, no logging, no extra headers. The distance from the floor is what
// Express costs; the distance to the full server, our layers.
import { jobApp, listen } from './express-job.js';

listen(jobApp());
