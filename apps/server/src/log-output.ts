// Where the service's JSON log lines go: stdout, through pino's own asynchronous destination (what `pino()`
// makes: sonic-boom, each line handed to the kernel as it comes), and the wait a process makes before it
// exits, for the lines it still holds. At exit pino writes what is left synchronously, and sonic-boom 4
// (pino 10's) retries every error of that last write every 100 ms for good, not only EAGAIN: a process whose
// reader had gone (EPIPE) while two lines were still to be written never exited (sonic-boom 5 throws
// instead, from an exit handler). A write that fails while the process still runs makes pino drop the rest
// of its output (a reader gone is never fatal), so the stop lets the last lines be written, or fail, first.
// Written by hand: docs/decisions.md#log-output.
import { type Logger, type LoggerOptions, pino } from 'pino';

let destination: ReturnType<typeof pino.destination> | undefined;

/** A logger of JSON lines on stdout, whose last lines exitWhenWritten waits for. */
export function jsonLogger(options: LoggerOptions): Logger {
  destination = pino.destination({ fd: 1, sync: false });
  return pino(options, destination);
}

/**
 * Exits with `code` once the lines logged so far are written or have failed (their reader gone), within
 * `withinMs` (a reader that is there but does not read holds them no longer than that).
 */
export async function exitWhenWritten(code: number, withinMs: number): Promise<never> {
  const output = destination;
  if (output) {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      // A line was just logged (the stop's last), so a write is in flight: its end says 'drain' or 'error'.
      output.once('drain', resolve);
      output.once('error', resolve);
      timer = setTimeout(resolve, withinMs);
    });
    clearTimeout(timer);
  }
  process.exit(code);
}
