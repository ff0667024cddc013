// Second opinion on the contract: swagger-parser dereferences every $ref and validates the whole
// document against the OpenAPI 3.1 schema, independently of Redocly.
import SwaggerParser from '@apidevtools/swagger-parser';
import { specRoot } from './shared.js';

const root = specRoot;
try {
  const api = await SwaggerParser.validate(root);
  process.stdout.write(`swagger-parser: ${api.info.title} ${api.info.version} is valid\n`);
} catch (error) {
  process.stderr.write(`swagger-parser: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
