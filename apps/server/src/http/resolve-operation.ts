// The head of both APIs' chains: the request's operation, matched on the contract once (contract.ts) and
// kept in res.locals.operation for every layer after it that asks (the span's name, the metrics' label,
// the deprecation headers and the sunset), instead of each matching the path again.
import type { NextFunction, Request, Response } from 'express';
import { type OpenApiDocument, operations } from '../contract.js';

export function resolveOperation(contract: OpenApiDocument, basePath: string) {
  const operationOf = operations(contract, basePath);
  return function resolveOperation(req: Request, res: Response, next: NextFunction) {
    res.locals.operation = operationOf(req.method, `${req.baseUrl}${req.path}`);
    next();
  };
}
