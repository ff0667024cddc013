// Validation of every /v1 request and response against the bundled contract (express-openapi-validator),
// and the same contract's response schemas compiled for judging a write before it is committed. The
// validator runs patched, cheaper per request: docs/decisions.md#validator-patch.

import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Request } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { OpenApiDocument } from '../contract.js';
import { answers } from './http-error.js';

export type ContractViolation = { method: string; path: string; message: string };

/** A violation reporter that also counts it (animal_store_contract_violations_total) under `api`. */
export const countedViolations =
  (
    counter: { inc(labels: { api: string }): void },
    api: 'public' | 'admin',
    report: (violation: ContractViolation) => void,
  ) =>
  (violation: ContractViolation): void => {
    counter.inc({ api });
    report(violation);
  };

export function contractValidator(
  apiSpec: OpenApiDocument,
  onViolation: (violation: ContractViolation) => void,
) {
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
    validateSecurity: false, // bearer keys are checked by our own middleware (see identify.ts)
    fileUploader: false, // the contracts take no multipart bodies: no multer layer per request
    validateFormats: true,
    // ajv-formats' full mode: a date is a real day (2026-02-30 is refused, not read as 2 March) and a
    // date-time a real instant; the default fast mode checks only the shape.
    ajvFormats: { mode: 'full' },
  });
}

/**
 * `accept(schema)` returns a function that throws (a 500, after reporting the violation) when a value
 * breaks the contract's component schema: a store runs it on the row it is about to commit, so that a
 * write whose response would break the contract changes nothing.
 */
export function schemaChecks(apiSpec: OpenApiDocument, onViolation: (violation: ContractViolation) => void) {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  ajv.addSchema(apiSpec, 'contract');
  return (schema: string, req: Request) => {
    const validate = ajv.getSchema(`contract#/components/schemas/${schema}`);
    if (!validate) throw new Error(`the contract has no schema ${schema}`);
    return (value: unknown) => {
      if (validate(value)) return;
      onViolation({ method: req.method, path: req.originalUrl, message: ajv.errorsText(validate.errors) });
      throw answers.unexpected();
    };
  };
}
