// Validation of every /v1 request and response against the bundled contract (express-openapi-validator).

import type { Request } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';

export type ContractViolation = { method: string; path: string; message: string };

export function contractValidator(apiSpec: object, onViolation: (violation: ContractViolation) => void) {
  return OpenApiValidator.middleware({
    apiSpec: apiSpec as never,
    validateApiSpec: false, // linted and validated at build time; skipping it speeds up start
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: {
      // A response that breaks the contract is a bug: report it, then fail the request with a 500.
      onError: (error, _body, req: Request) => {
        onViolation({ method: req.method, path: req.originalUrl, message: error.message });
        throw error;
      },
    },
    validateSecurity: false, // bearer keys are checked by our own middleware (see authenticate.ts)
    validateFormats: true,
  });
}
