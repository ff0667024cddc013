// How a test waits for something: it polls the thing itself (vitest's vi.waitUntil), for at most a bound,
// never for a set time (CONTRIBUTING.md#add-a-test, scripts/test-waits.mjs).
import { vi } from 'vitest';

/**
 * Polls `check` every `interval` ms until it holds, for at most `timeout` ms: whether it held. An error
 * `check` throws (a failed assertion, a refused connection) is thrown at once, never taken for "not yet".
 */
export async function heldWithin(
  check: () => boolean | Promise<boolean>,
  { timeout, interval = 100 }: { timeout: number; interval?: number },
): Promise<boolean> {
  let thrown: { error: unknown } | undefined;
  const settled = async () => {
    try {
      return await check();
    } catch (error) {
      thrown = { error };
      return true;
    }
  };
  const held = await vi.waitUntil(settled, { timeout, interval }).then(
    () => true,
    () => false,
  );
  if (thrown) throw thrown.error;
  return held;
}

/** Polls `check` until it holds, for at most `ms`; the time it took. An error `check` throws is the answer. */
export async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  if (!(await heldWithin(check, { timeout: ms }))) throw new Error(`not within ${ms} ms`);
  return performance.now() - started;
}

/**
 * Resolves once `count` (a load's answers, its admissions) has grown by `n` from now: a step of a test ran
 * under that load. Fails naming `what` after `timeout` ms.
 */
export async function grown(
  count: () => number,
  n: number,
  { timeout = 30_000, what = 'the load' }: { timeout?: number; what?: string } = {},
): Promise<void> {
  const from = count();
  if (!(await heldWithin(() => count() - from >= n, { timeout, interval: 50 })))
    throw new Error(`${what}: ${count() - from} of ${n} more within ${timeout} ms`);
}
