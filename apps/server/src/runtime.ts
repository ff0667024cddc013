// Imported first by every entry (the service, the keys command): on a Node.js outside the package's engines
// range the process stops here with one line, before anything loads better-sqlite3, whose prebuilt binary
// crashes Node 20 with a segmentation fault and no message at all.
import { unsupportedRuntime } from './version.js';

/** What was run, as the README writes it: the keys command with its arguments, else the server. */
function command(): string {
  if (!/keys\.js$/.test(process.argv[1] ?? '')) return 'pnpm start';
  const quoted = process.argv.slice(2).map((arg) => (/^[\w.,:/=@+-]+$/.test(arg) ? arg : `"${arg}"`));
  return ['pnpm keys', ...quoted].join(' ');
}

const problem = unsupportedRuntime(process.version, command());
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
