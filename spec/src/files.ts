// Where the bundled contract lives on disk, for Node consumers (server validator, Prism, docs).
import { fileURLToPath } from 'node:url';

/** The whole contract bundled into one JSON file (built by `pnpm build`). */
export const bundledSpecPath = fileURLToPath(new URL('../dist/openapi.json', import.meta.url));
/** The same bundle as YAML. */
export const bundledSpecYamlPath = fileURLToPath(new URL('../dist/openapi.yaml', import.meta.url));
/** The HTML reference rendered from the bundle by `redocly build-docs` (self-contained, works offline). */
export const docsPath = fileURLToPath(new URL('../dist/docs.html', import.meta.url));
