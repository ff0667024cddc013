// The sunset guard and the spec review, on temporary fixture specs, dates and changesets.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundledAdminSpecPath, bundledSpecPath } from '@animal-store/spec/files';
import { afterAll, describe, expect, it } from 'vitest';

/** Every fixture of this file (specs, changesets, repositories) is made in here, removed after it. */
const scratch = mkdtempSync(join(tmpdir(), 'guards-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noExplicitAny: fixtures edit arbitrary places of the document
type Spec = Record<string, any>;
const run = promisify(execFile);
const script = (name: string) => fileURLToPath(new URL(`../src/${name}`, import.meta.url));

function fixture(edit: (spec: Spec) => void = () => {}, from = bundledSpecPath): string {
  const spec = JSON.parse(readFileSync(from, 'utf8')) as Spec;
  edit(spec);
  const file = join(mkdtempSync(join(scratch, 'spec-fixture-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(spec));
  return file;
}

/** A directory whose .changeset/ holds the given changesets. */
function changesets(...entries: { bump: 'major' | 'minor' | 'patch'; summary: string }[]): string {
  const root = mkdtempSync(join(scratch, 'changesets-'));
  mkdirSync(join(root, '.changeset'));
  entries.forEach(({ bump, summary }, i) => {
    writeFileSync(
      join(root, '.changeset', `change-${i}.md`),
      `---\n'@animal-store/spec': ${bump}\n---\n\n${summary}\n`,
    );
  });
  return root;
}

async function exitOf(file: string, args: string[]) {
  try {
    const { stdout } = await run('tsx', [script(file), ...args]);
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

describe('sunset guard', () => {
  const removal = { bump: 'major' as const, summary: 'Remove getPet (GET /pets/{petId}); use listPets.' };
  it.each([
    ['far from the sunset', '2026-11-22', [], [], 0, /in 1474 days/],
    ['inside the window, nothing announced', '2030-07-01', [], [], 1, /in 157 days\. Add a major changeset/],
    ['inside the window, removal announced', '2030-07-01', [removal], [], 0, /removal announced/],
    [
      'inside the window, only a minor changeset',
      '2030-07-01',
      [{ ...removal, bump: 'minor' as const }],
      [],
      1,
      /Add a major/,
    ],
    [
      'inside the window, a major that does not name it',
      '2030-07-01',
      [{ bump: 'major' as const, summary: 'Other.' }],
      [],
      1,
      /Add a major/,
    ],
    ['inside a shorter configured window', '2030-07-01', [], ['--window-days', '30'], 0, /in 157 days/],
    ['past the sunset, even if announced', '2030-12-05', [removal], [], 1, /is still in the spec/],
  ])('%s (today %s)', async (_, today, pending, extra, code, message) => {
    const result = await exitOf('sunset-guard.ts', [
      '--spec',
      fixture(),
      '--today',
      today,
      '--root',
      changesets(...pending),
      ...extra,
    ]);
    expect(result).toEqual({ code, output: expect.stringMatching(message) });
  });

  /** The guard on a spec without getPet, against the published contract, on `today`. */
  const withoutGetPet = (today: string, root: string) =>
    exitOf('sunset-guard.ts', [
      '--spec',
      fixture((s) => delete s.paths['/pets/{petId}']),
      '--published',
      fixture(),
      '--today',
      today,
      '--root',
      root,
    ]);

  it('when the operation is gone from the spec on or after its sunset, then it passes', async () => {
    for (const today of ['2030-12-05', '2031-01-01']) {
      const result = await withoutGetPet(today, changesets());
      expect(result.code, today).toBe(0);
    }
  });

  it('when the operation is gone before its sunset, then it fails naming the date, even with a major changeset announcing it', async () => {
    for (const today of ['2026-11-27', '2030-12-04']) {
      const result = await withoutGetPet(today, changesets(removal));
      expect(result, today).toEqual({
        code: 1,
        output: expect.stringMatching(
          /getPet \(GET \/pets\/\{petId\}\) is gone from the spec before its sunset, 2030-12-05/,
        ),
      });
    }
  });

  it('reads what the last release published from git by default', async () => {
    const spec = fixture((s) => delete s.paths['/pets/{petId}']);
    const result = await exitOf('sunset-guard.ts', [
      '--spec',
      spec,
      '--today',
      '2026-11-27',
      '--root',
      changesets(),
    ]);
    expect(result).toEqual({ code: 1, output: expect.stringMatching(/which release [0-9a-f]{7} published/) });
  });

  it('follows a changed x-sunset date', async () => {
    const spec = fixture((s) => {
      s.paths['/pets/{petId}'].get['x-sunset'] = '2027-01-01T00:00:00Z';
    });
    expect(
      (await exitOf('sunset-guard.ts', ['--spec', spec, '--today', '2026-11-22', '--root', changesets()]))
        .code,
    ).toBe(1);
  });
});

describe('pnpm spec:diff', () => {
  /** The review of the bundled contract against an edited copy, with the given pending changesets. */
  const review = (edit: (s: Spec) => void, root = changesets()) =>
    exitOf('spec-diff.ts', ['--base-file', fixture(), '--revision-file', fixture(edit), '--root', root]);
  const schemas = (s: Spec) => s.components.schemas;
  const listParams = (s: Spec) => s.paths['/pets'].get.parameters as Spec[];
  // Each edit with the rule redocly names on its row: one review of them all, every row read on its own.
  const breaking: [string, (s: Spec) => void, string][] = [
    ['a removed operation', (s) => delete s.paths['/pets/{petId}'], 'path-removed'],
    ['a removed response field', (s) => delete schemas(s).Pet.properties.status, 'property-removed'],
    [
      'a new required request field',
      (s) => schemas(s).NewPet.required.push('status'),
      'required-properties-added',
    ],
    ['a narrowed enum', (s) => schemas(s).PetStatus.enum.pop(), 'enum-values-removed'],
    [
      'a narrowed range',
      (s) => (s.components.parameters.Limit.schema.maximum = 50),
      'schema-constraint-changed',
    ],
    [
      'a changed type',
      (s) => (schemas(s).NewPet.properties.categoryId.type = 'string'),
      'schema-type-changed',
    ],
    ['a removed status code', (s) => delete s.paths['/pets'].post.responses['415'], 'response-removed'],
  ];
  const compatible: [string, (s: Spec) => void, RegExp][] = [
    [
      'an added optional query parameter',
      (s) => listParams(s).push({ name: 'q', in: 'query', description: 'x', schema: { type: 'string' } }),
      /\| 🟢 minor \| added \| `GET \/pets query\.q` \|/,
    ],
    [
      'an added operation',
      (s) => (s.paths['/pets'].put = { ...s.paths['/pets'].post, operationId: 'replacePets' }),
      /\| 🟢 minor \| added \| `PUT \/pets` \|/,
    ],
  ];
  /** Every edit of `cases` made in one copy. */
  const all = (cases: [string, (s: Spec) => void, ...unknown[]][]) => (s: Spec) => {
    for (const [, edit] of cases) edit(s);
  };
  /** The review's table rows, one string per change. */
  const rows = (output: string) => output.split('\n').filter((line) => /^\| (🔴|🟢|⚪) /.test(line));

  it(`rates each of ${breaking.map(([name]) => name).join(', ')} as breaking, and exits 1`, async () => {
    const result = await review(all(breaking));
    expect(result.code).toBe(1);
    const table = rows(result.output);
    expect(table).toHaveLength(breaking.length);
    for (const [name, , rule] of breaking) {
      expect(
        table.filter((row) => row.endsWith(`(${rule}) |`)),
        name,
      ).toEqual([expect.stringMatching(/^\| 🔴 major \|/)]);
    }
    expect(result.output).toMatch(/7 breaking change\(s\) for clients/);
  });

  it('a breaking change is not recorded by a minor (or patch) changeset: it needs a major one', async () => {
    const removeGetPet = breaking[0]?.[1] as (s: Spec) => void;
    for (const bump of ['minor', 'patch'] as const) {
      const result = await review(removeGetPet, changesets({ bump, summary: 'Remove getPet.' }));
      expect(result, bump).toEqual({
        code: 1,
        output: expect.stringMatching(new RegExp(`need a major changeset.*found: ${bump}`)),
      });
    }
  });

  it(`rates ${compatible.map(([name]) => name).join(' and ')} as additive: exits 1 without a minor or major changeset, naming minor`, async () => {
    const bare = await review(all(compatible));
    expect(bare.code).toBe(1);
    expect(bare.output).not.toMatch(/🔴 major/);
    for (const [name, , row] of compatible) expect(bare.output, name).toMatch(row);
    expect(bare.output).toMatch(
      /additive change\(s\) for clients need a minor changeset of @animal-store\/spec/,
    );
    const patch = await review(all(compatible), changesets({ bump: 'patch', summary: 'A fix.' }));
    expect(patch).toEqual({
      code: 1,
      output: expect.stringMatching(/need a minor changeset.*found: patch/),
    });
    // (A major one records it too: spec-diff.ts accepts major wherever minor is needed.)
    const recorded = await review(all(compatible), changesets({ bump: 'minor', summary: 'A new field.' }));
    expect(recorded).toEqual({
      code: 0,
      output: expect.stringMatching(/recorded by the minor or major changeset/),
    });
  });

  it('rates allowReserved turned on for a query parameter as additive (it refuses nothing it took), and off as breaking', async () => {
    const on = await review((s) => {
      listParams(s).push({ name: 'q', in: 'query', description: 'x', schema: { type: 'string' } });
    });
    expect(on.code).toBe(1); // the parameter itself is new: minor
    const base = fixture((s) => {
      listParams(s).push({ name: 'q', in: 'query', description: 'x', schema: { type: 'string' } });
    });
    const relaxed = fixture((s) => {
      listParams(s).push({
        name: 'q',
        in: 'query',
        description: 'x',
        schema: { type: 'string' },
        allowReserved: true,
      });
    });
    const minor = await exitOf('spec-diff.ts', [
      '--base-file',
      base,
      '--revision-file',
      relaxed,
      '--root',
      changesets(),
    ]);
    expect(minor.output).toMatch(/🟢 minor \| modified \| `GET \/pets query\.q · allowReserved`/);
    expect(minor.output).toMatch(/reserved characters now taken: minor/);
    expect(minor.output).not.toMatch(/🔴 major/);
    const strict = await exitOf('spec-diff.ts', [
      '--base-file',
      relaxed,
      '--revision-file',
      base,
      '--root',
      changesets(),
    ]);
    expect(strict.output).toMatch(/🔴 major \| modified \| `GET \/pets query\.q · allowReserved`/);
  });

  it('rates a widened range and a new description as patches, which need no bump of their own', async () => {
    const result = await review((s) => {
      s.components.parameters.Limit.schema.maximum = 200;
      s.components.schemas.Pet.description = 'Another description.';
    });
    expect(result.code).toBe(0);
    const table = rows(result.output);
    expect(table).toEqual([
      expect.stringMatching(/^\| ⚪ patch \|.*maximum/),
      expect.stringMatching(/^\| ⚪ patch \|.*Pet\.yaml/),
    ]);
  });

  it('names a parameter as in.name and a body field by its path, a removed one from the base', async () => {
    const result = await review((s) => {
      listParams(s).push({ name: 'q', in: 'query', description: 'x', schema: { type: 'string' } });
      schemas(s).NewPet.properties.nickname = { type: 'array', items: { type: 'string' } };
      delete schemas(s).Pet.properties.status;
    });
    expect(result.output).toMatch(/\| 🟢 minor \| added \| `GET \/pets query\.q` \|/);
    expect(result.output).toMatch(/\| 🟢 minor \| added \| `POST \/pets body\.nickname` \|/);
    expect(result.output).toMatch(/\| 🔴 major \| removed \| `GET \/pets 200 body\[\]\.status` \|/);
    expect(result.output).not.toMatch(/parameters\/\d/);
  });

  it('a new property another schema refers to shows once per operation, not as a component the bundler named', async () => {
    const result = await review((s) => {
      schemas(s).birthDate = { type: 'string', format: 'date', description: 'Born.' };
      schemas(s).NewPet.properties.birthDate = { $ref: '#/components/schemas/birthDate' };
      schemas(s).Pet.properties.birthDate = { $ref: '#/components/schemas/birthDate' };
    });
    expect(result.output).toMatch(/\| 🟢 minor \| added \| `POST \/pets body\.birthDate` \|/);
    expect(result.output).toMatch(/\| 🟢 minor \| added \| `GET \/pets 200 body\[\]\.birthDate` \|/);
    expect(result.output).not.toContain('#/components/schemas/birthDate');
    // A component with a source file of its own is still shown (spec/openapi/components/schemas/Pet.yaml).
    const described = await review((s) => {
      schemas(s).Pet.description = 'Another description.';
    });
    expect(described.output).toMatch(/spec\/openapi\/components\/schemas\/Pet\.yaml/);
  });

  it('when a major changeset is pending, then a breaking change is allowed', async () => {
    const removeGetPet = breaking[0]?.[1] as (s: Spec) => void;
    const result = await review(removeGetPet, changesets({ bump: 'major', summary: 'Remove getPet.' }));
    expect(result).toEqual({
      code: 0,
      output: expect.stringMatching(/recorded by the major changeset \.changeset\/change-0\.md/),
    });
  });

  it('when nothing changed, then it says so', async () => {
    const result = await review(() => {});
    expect(result).toEqual({ code: 0, output: 'No changes to the contract.\n' });
  });

  it("shows each change at the spec's own file and line, without escaped backticks or temporary paths", async () => {
    // The base lacks the id parameter and has another Pet description: both are changes of the sources.
    const base = fixture((s) => {
      delete s.components.parameters.Id;
      s.paths['/pets'].get.parameters = s.paths['/pets'].get.parameters.filter(
        (p: Spec) => !/Id\.yaml|\/Id$/.test(p.$ref),
      );
      s.components.schemas.Pet.description = 'An older description.';
    });
    const result = await exitOf('spec-diff.ts', [
      '--base-file',
      base,
      '--revision-file',
      fixture(),
      '--root',
      changesets({ bump: 'minor', summary: 'The id filter.' }),
    ]);
    expect(result.code).toBe(0);
    expect(result.output).toContain('| Impact | Change | What | Location | Details |');
    expect(result.output).toMatch(/\| spec\/openapi\/components\/parameters\/Id\.yaml:1 \|/);
    expect(result.output).toMatch(/\| spec\/openapi\/components\/schemas\/Pet\.yaml:2 \|/);
    expect(result.output).not.toContain('\\`');
    expect(result.output).not.toMatch(/spec-fixture-|\.json:\d+/);
  });

  it('compares the working tree with a git ref, one section per contract', async () => {
    const result = await exitOf('spec-diff.ts', ['--base', 'HEAD']);
    expect(result.code).toBe(0);
    expect(result.output).toContain('# The public API (spec/openapi/openapi.yaml)');
    expect(result.output).toContain('# The admin API (spec/admin/openapi.yaml)');
  });

  it('reviews the admin contract too: a removed admin operation is breaking; a change is shown at its own file and line', async () => {
    const admin = (edit: (s: Spec) => void = () => {}) => fixture(edit, bundledAdminSpecPath);
    const result = await exitOf('spec-diff.ts', [
      '--admin',
      '--base-file',
      admin(),
      '--revision-file',
      admin((s) => delete s.paths['/keys/{keyId}/unban']),
      '--root',
      changesets(),
    ]);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/🔴 major/);
    expect(result.output).toMatch(/path-removed/);
    const added = await exitOf('spec-diff.ts', [
      '--admin',
      '--base-file',
      admin((s) => delete s.components.schemas.Key.properties.lastUsedAt.description),
      '--revision-file',
      admin(),
      '--root',
      changesets(),
    ]);
    expect(added.code).toBe(0);
    expect(added.output).toMatch(/\| spec\/admin\/components\/schemas\/Key\.yaml:\d+ \|/);
    // A change to a response body's own schema is named by its operation, not by a JSON pointer.
    const described = await exitOf('spec-diff.ts', [
      '--admin',
      '--base-file',
      admin((s) => {
        s.components.schemas.KeyPage.description = 'An older description.';
      }),
      '--revision-file',
      admin(),
      '--root',
      changesets(),
    ]);
    expect(described.output).toContain('| `GET /keys 200 body · description` |');
    expect(described.output).not.toContain('#/paths/');
  });
});

describe('matched releases', () => {
  const root = new URL('../../../', import.meta.url);
  const read = (path: string) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));
  const config = read('.changeset/config.json') as { fixed: string[][] };
  const locations: Record<string, string> = {
    '@animal-store/spec': 'spec/package.json',
    '@animal-store/server': 'apps/server/package.json',
    '@animal-store/client': 'packages/client/package.json',
  };
  const group = config.fixed[0] ?? [];

  it('releases the spec (with its generated types), the server and the client as one fixed group', () => {
    expect([...group].sort()).toEqual(Object.keys(locations).sort());
  });

  it("gives every package of the group the contract's info.version", () => {
    const { info } = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as { info: { version: string } };
    for (const name of group)
      expect({ name, version: read(locations[name] as string).version }).toEqual({
        name,
        version: info.version,
      });
  });

  it('uses workspace: ranges between the packages', () => {
    for (const name of group) {
      const pkg = read(locations[name] as string) as { dependencies?: Record<string, string> };
      for (const [dep, range] of Object.entries(pkg.dependencies ?? {})) {
        if (dep.startsWith('@animal-store/'))
          expect({ dep, range }).toEqual({ dep, range: expect.stringMatching(/^workspace:/) });
      }
    }
  });
});

describe('the changeset guard (src/changeset-guard.ts, pnpm guards)', () => {
  const guard = fileURLToPath(new URL('../src/changeset-guard.ts', import.meta.url));
  const changeset = (releases: string) => `---\n${releases}---\n\nA change.\n`;
  /** A git repository on main whose first commit is a release (the server's version set). */
  async function repository() {
    const dir = mkdtempSync(join(scratch, 'changeset-guard-'));
    const git = (...args: string[]) =>
      run('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
    const write = (path: string, text: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    write('apps/server/package.json', '{ "version": "2.0.0", "dependencies": { "express": "^5.1.0" } }\n');
    write('apps/server/src/app.ts', 'export {};\n');
    write('packages/client/src/index.ts', 'export {};\n');
    write('apps/console/src/main.ts', 'export {};\n');
    write('spec/openapi/openapi.yaml', 'openapi: 3.1.0\n');
    write('.changeset/README.md', 'Changesets.\n');
    await git('init', '-q', '-b', 'main');
    await git('add', '.');
    await git('commit', '-qm', 'Release 2.0.0');
    const commit = async (message: string) => {
      await git('add', '.');
      await git('commit', '-qm', message);
    };
    // The guard's own imports resolve from the repository it checks: this one's node_modules stand in.
    const nodeModules = fileURLToPath(new URL('../../../node_modules', import.meta.url));
    await run('ln', ['-s', nodeModules, join(dir, 'node_modules')]);
    // A branch of its own, not a pull request's (these tests may run inside one, on GitHub).
    const { GITHUB_BASE_REF: _, ...env } = process.env;
    const check = () =>
      run('tsx', [guard], { cwd: dir, env }).then(
        () => 0,
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    return { write, check, git, commit };
  }

  it('on main, fails an uncommitted change to a released source with no changeset naming its package', async () => {
    const repo = await repository();
    expect(await repo.check()).toBe(0);
    repo.write('apps/server/src/app.ts', 'export const changed = 1;\n');
    expect(await repo.check()).toEqual({
      code: 1,
      stderr: expect.stringContaining('apps/server/src/app.ts'),
    });
    repo.write('.changeset/client.md', changeset('"@animal-store/client": patch\n'));
    expect(await repo.check()).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('@animal-store/server'),
    });
    repo.write('.changeset/a-change.md', changeset('"@animal-store/server": patch\n'));
    expect(await repo.check()).toBe(0);
  });

  it("on a branch, another change's pending changeset (empty or not) covers nothing; its own does", async () => {
    const repo = await repository();
    repo.write('.changeset/other.md', changeset(''));
    repo.write('.changeset/other-server.md', changeset('"@animal-store/client": minor\n'));
    await repo.commit('Another change, with its changesets');
    await repo.git('checkout', '-qb', 'feature');
    repo.write('apps/server/src/app.ts', 'export const changed = 1;\n');
    await repo.commit('A server change without a changeset');
    const failed = await repo.check();
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toContain('adds no changeset naming it');
    expect((failed as { stderr: string }).stderr).toContain('@animal-store/server');
    repo.write('.changeset/mine.md', changeset('"@animal-store/server": minor\n'));
    expect(await repo.check()).toBe(0);
  });

  it('an empty changeset added by the change declares that users see nothing of it', async () => {
    const repo = await repository();
    await repo.git('checkout', '-qb', 'refactor');
    repo.write('apps/server/src/app.ts', 'export const renamed = 1;\n');
    repo.write('.changeset/refactor.md', changeset(''));
    await repo.commit('A refactor');
    expect(await repo.check()).toBe(0);
  });

  it("counts the console's sources as the server's: a console change needs a changeset naming the server", async () => {
    const repo = await repository();
    repo.write('apps/console/src/main.ts', 'export const shown = 1;\n');
    expect(await repo.check()).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(
        /@animal-store\/server and adds no changeset naming it[\s\S]*apps\/console\/src\/main\.ts/,
      ),
    });
    repo.write('.changeset/console.md', changeset('"@animal-store/server": patch\n'));
    expect(await repo.check()).toBe(0);
  });

  it('since the release, a contract change is named by a pending changeset of the spec: an empty one names nothing', async () => {
    const repo = await repository();
    repo.write('spec/openapi/openapi.yaml', 'openapi: 3.1.0\ninfo: {}\n');
    repo.write('.changeset/quiet.md', changeset(''));
    await repo.commit('A contract change that came in with an empty changeset');
    const failed = await repo.check();
    expect(failed).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(
        /changed since the release commit [0-9a-f]{7}, and no pending changeset names @animal-store\/spec/,
      ),
    });
    repo.write('.changeset/spec.md', changeset('"@animal-store/spec": patch\n'));
    await repo.commit('Its changeset');
    expect(await repo.check()).toBe(0);
  });

  it("counts a package's runtime dependencies as shipped, and lets tests change without a changeset", async () => {
    const repo = await repository();
    repo.write('apps/server/src/app.test.ts', 'export {};\n');
    repo.write('packages/client/src/index.test-d.ts', 'export {};\n'); // a type test ships nothing either
    expect(await repo.check()).toBe(0);
    repo.write(
      'apps/server/package.json',
      '{ "version": "2.0.0", "dependencies": { "express": "^5.2.0" } }\n',
    );
    expect(await repo.check()).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('apps/server/package.json'),
    });
  });
});

describe('the releases table (docs/releasing.md)', () => {
  const table = readFileSync(new URL('../../../docs/releasing.md', import.meta.url), 'utf8');
  const rows = [...table.matchAll(/^\| `(\d+\.\d+\.\d+)` +\| `([0-9a-f]{40})` +\|/gm)].map(
    ([, version, commit]) => ({
      version: version as string,
      commit: commit as string,
    }),
  );
  const repo = fileURLToPath(new URL('../../../', import.meta.url));
  const at = async (commit: string, path: string) =>
    (
      JSON.parse((await run('git', ['show', `${commit}:${path}`], { cwd: repo })).stdout) as {
        version: string;
      }
    ).version;

  it('names every release, 1.0.0 on', () => {
    expect(rows.map((r) => r.version)).toEqual(expect.arrayContaining(['1.0.0', '1.1.0', '2.0.0']));
  });

  it.each(['spec/package.json', 'apps/server/package.json', 'packages/client/package.json'])(
    'each commit holds its version in %s',
    async (path) => {
      for (const { version, commit } of rows)
        expect({ version, at: await at(commit, path) }).toEqual({ version, at: version });
    },
  );
});

describe('pnpm release, asked how', () => {
  it('--help prints the usage and exits 0, before building anything', async () => {
    const { code, output } = await exitOf('release.ts', ['--help']);
    expect(code).toBe(0);
    expect(output).toMatch(/^Usage: pnpm release \[--dry-run\] \[--skip-tests\]/);
    expect(output).toContain('v<version>');
  });

  it('an unknown option is one line and the usage, exit 2, no stack trace', async () => {
    const { code, output } = await exitOf('release.ts', ['--publish-now']);
    expect(code).toBe(2);
    expect(output).toMatch(/^release: Unknown option '--publish-now'/);
    expect(output).toContain('Usage: pnpm release');
    expect(output).not.toMatch(/\n\s+at /);
  });
});
