// Imported first by every entry (the service, the keys command): on a Node.js outside the package's engines
// range the process stops here with one line, before anything loads better-sqlite3, whose prebuilt binary
// crashes Node 20 with a segmentation fault and no message at all.
import { unsupportedRuntime } from './version.js';

const problem = unsupportedRuntime();
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
