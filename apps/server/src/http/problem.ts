// The one Error shape of every failure, and the one table of which code goes with which status.
import type { ErrorCode } from '@animal-store/spec';
import type { Response } from 'express';

export const codeForStatus: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
};

/** A failure we answer on purpose; anything else thrown becomes a generic 500. */
export class Problem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: ErrorCode = codeForStatus[status] ?? 'internal_error',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function sendProblem(res: Response, problem: Problem): void {
  res.set(problem.headers);
  res.status(problem.status).json({ code: problem.code, message: problem.message, status: problem.status });
}
