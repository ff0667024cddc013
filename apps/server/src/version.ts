// The server package's own version (from its package.json, one level above src/ and dist/ alike).
import { readFileSync } from 'node:fs';

export const serverVersion = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
