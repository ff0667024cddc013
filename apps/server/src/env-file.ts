// `.env` in the working directory, when there is one, fills in configuration the environment leaves unset
// (Node's own parser, process.loadEnvFile): the real environment always wins. Imported first by the
// service and the keys command, before the configuration is read.
import { existsSync } from 'node:fs';

const envFile = '.env';
if (existsSync(envFile)) process.loadEnvFile(envFile);
