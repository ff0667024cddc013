// A failure answered on purpose, and the one way the Error body `{code, message, status}` is written.
// Which code goes with which status is the contract's table (Error.code's x-status-of-code).
import { type ErrorCode, errorCodes, errorStatuses } from '@animal-store/spec';
import type { Response } from 'express';

/** The first code the contract lists for each status (e.g. 429 → rate_limited). */
export const codeForStatus: ReadonlyMap<number, ErrorCode> = new Map(
  [...errorCodes].reverse().map((code) => [errorStatuses[code], code]),
);

export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly code: ErrorCode;
  constructor(
    readonly status: number,
    message: string,
    code?: ErrorCode,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code ?? codeForStatus.get(status) ?? 'internal_error';
  }

  get body() {
    return { code: this.code, message: this.message, status: this.status };
  }
}

export function sendError(res: Response, error: HttpError): void {
  res.locals.errorCode = error.body.code;
  res.set(error.headers);
  res.status(error.status).json(error.body);
}
