// Whether the store takes writes, as the requests have found it: an episode of a full disk or unwritable
// files starts with the first failed write (logged once, at error) and ends with the first write that
// succeeds again (logged once); /readyz reports it meanwhile and tries a write of its own to end it.
import type { Logger } from 'pino';
import type { UnwritableReason } from '../store/unavailable.js';

export class StoreHealth {
  #unwritable: { reason: UnwritableReason; message: string } | undefined;
  constructor(private readonly logger: Logger) {}

  /** Why writes fail now, or undefined. */
  get unwritable(): UnwritableReason | undefined {
    return this.#unwritable?.reason;
  }

  failedWrite(reason: UnwritableReason, message: string): void {
    if (this.#unwritable) return; // once per episode
    this.#unwritable = { reason, message };
    this.logger.error(
      { reason, failure: message },
      'the store cannot take writes; answering 503 until it can',
    );
  }

  succeededWrite(): void {
    if (!this.#unwritable) return;
    this.logger.warn({ reason: this.#unwritable.reason }, 'the store takes writes again');
    this.#unwritable = undefined;
  }
}
