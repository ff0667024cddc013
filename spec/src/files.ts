// Where the bundled contracts live on disk, for Node consumers (server validator, Prism, the server's docs
// page). The rendered docs page itself is the server's (apps/server/dist/docs.html): a client installing
// this package never downloads it.
import { fileURLToPath } from 'node:url';

/** The whole contract bundled into one JSON file (built by `pnpm build`). */
export const bundledSpecPath = fileURLToPath(new URL('../dist/openapi.json', import.meta.url));
/** The same bundle as YAML. */
export const bundledSpecYamlPath = fileURLToPath(new URL('../dist/openapi.yaml', import.meta.url));
/** The admin contract bundled into one JSON file (served by the admin listener). */
export const bundledAdminSpecPath = fileURLToPath(new URL('../dist/admin.json', import.meta.url));
