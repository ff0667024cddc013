// Second opinion on both contracts (public and admin): swagger-parser dereferences every $ref and validates the whole
// document against the OpenAPI 3.1 schema, independently of Redocly.
import SwaggerParser from '@apidevtools/swagger-parser';
import { adminSpecRoot, specRoot } from './shared.js';

for (const root of [specRoot, adminSpecRoot]) {
  try {
    const api = await SwaggerParser.validate(root);
    process.stdout.write(`swagger-parser: ${api.info.title} ${api.info.version} is valid\n`);
  } catch (error) {
    process.stderr.write(`swagger-parser: ${root}: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
