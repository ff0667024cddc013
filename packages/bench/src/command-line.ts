// What the bench's commands (`pnpm bench`, `pnpm bench:store-cost`) do with their command line alike:
// --help prints the usage and exits 0; an option parseArgs refuses is one line naming it, the usage, and
// exit 2, never a stack trace.
import { type ParseArgsConfig, parseArgs } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `command`'s options as parsed from this process's arguments (each command declares `help`). */
export function commandLine<T extends Options>(command: string, usage: string, options: T) {
  let values: ReturnType<typeof parseArgs<{ options: T }>>['values'];
  try {
    values = parseArgs({ options }).values;
  } catch (error) {
    process.stderr.write(`${command}: ${(error as Error).message}\n\n${usage}`);
    process.exit(2);
  }
  if ((values as { help?: boolean }).help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return values;
}
