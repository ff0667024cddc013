// The stop of what a process made, written once: each part registers its own stop step where it is made
// (onStop), and stop() runs the steps in the reverse order, so that what uses a part stops before the part
// (as fastify's onClose hooks): the listeners drain, then the usage meter writes, the limiter gives its
// leases back, the engines close. No caller orders a teardown by hand. A step that fails does not keep the
// ones after it from running; the first failure is thrown once all have run.

/** A stop step; told how much of the stop's bound is left (a step that may wait on the network bounds it). */
export type StopStep = (remainingMs: () => number) => unknown;

export class Stops {
  readonly #steps: StopStep[] = [];

  /** Registers the stop of something just made: it runs before the stops of everything made before it. */
  onStop(step: StopStep): void {
    this.#steps.push(step);
  }

  /** Runs every step, the last registered first, once. */
  async stop(remainingMs: () => number = () => Number.POSITIVE_INFINITY): Promise<void> {
    let failure: unknown;
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step(remainingMs);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
  }
}
