// A consumer outside the workspace: the packed client alone installed from its tarball with npm (its one
// runtime dependency, openapi-fetch, from the registry), type-checked by a strict tsc, and run against a
// live server.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createKey, type Running, server, tempDatabase } from './processes.js';

const run = promisify(execFile);
const workspace = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const project = mkdtempSync(join(tmpdir(), 'animal-store-consumer-'));
let live: Running | undefined;
afterAll(async () => {
  await live?.stop();
  rmSync(project, { recursive: true, force: true });
});

const consumer = `
import { ApiError, createClient, type Pet, productionBaseUrl } from '@animal-store/client';

const client = createClient({ baseUrl: process.env.BASE_URL as string, apiKey: process.env.API_KEY as string });
const created: Pet = await client.createPet({ name: 'Consumer', categoryId: 3 });
const pets = await client.listPets({ status: 'available', limit: 5 });
let code = '';
try {
  await client.createPet({ name: '', categoryId: 1 });
} catch (error) {
  if (error instanceof ApiError) code = error.code;
}
// Compile-time only (never called): the types come from the contract.
export const typeChecks = () => [
  // @ts-expect-error categoryId is required by the contract's NewPet
  client.createPet({ name: 'Typeless' }),
  // @ts-expect-error 'lost' is not a PetStatus
  client.listPets({ status: 'lost' }),
];
process.stdout.write(JSON.stringify({ created, count: pets.length, code, production: productionBaseUrl, remaining: client.rateLimit?.remaining }));
`;

describe('the packed client in a fresh project', () => {
  // npm's install from the registry and a strict tsc: minutes on a machine running a second suite beside.
  it('installs alone from its tarball, type-checks strictly, and talks to a live server', {
    timeout: 300_000,
  }, async () => {
    await run('pnpm', ['pack', '--pack-destination', project], { cwd: workspace('packages/client') });
    const tarballs = readdirSync(project).filter((f) => f.endsWith('.tgz'));
    expect(tarballs).toHaveLength(1);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { '@animal-store/client': `file:./${tarballs[0]}` },
      }),
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'dist',
          types: ['node'],
          typeRoots: [workspace('packages/contract-tests/node_modules/@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(join(project, 'consumer.ts'), consumer);
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
      cwd: project,
    });
    const installed = JSON.parse(
      readFileSync(join(project, 'node_modules/@animal-store/client/package.json'), 'utf8'),
    );
    expect(Object.keys(installed.dependencies)).toEqual(['openapi-fetch']); // the contract is built in
    expect(readdirSync(join(project, 'node_modules/@animal-store'))).toEqual(['client']);
    await run(workspace('packages/contract-tests/node_modules/.bin/tsc'), ['-p', project]);

    const databasePath = tempDatabase();
    const apiKey = await createKey(databasePath, '--plan', 'free');
    live = await server(databasePath);
    const { stdout } = await run(process.execPath, [join(project, 'dist/consumer.js')], {
      env: { ...process.env, BASE_URL: `${live.url}/v1`, API_KEY: apiKey },
    });
    expect(JSON.parse(stdout)).toEqual({
      created: { id: 1, name: 'Consumer', categoryId: 3, status: 'available' },
      count: 1,
      code: 'invalid_request',
      production: 'https://api.animal-store.example/v1',
      remaining: 57,
    });
  });
});
