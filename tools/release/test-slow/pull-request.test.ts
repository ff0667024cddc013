// The guards where a team reviews: GitHub's checkout of a pull request, rebuilt. A scratch origin whose main
// is this repository (its history, then the working tree as one commit); each case a branch of main merged
// as `refs/pull/N/merge`, fetched as actions/checkout@v4 does for each workflow (the depth read from the
// workflow's checkout step: 1 unless it says otherwise; detached at the merge commit), then judged by the
// workflow's own `run:` steps, run as the runner runs them (bash -eo pipefail, `${{ … }}` filled in, the
// pull request's GITHUB_* variables, CI=true, GITHUB_OUTPUT, `if:` on a step's outputs honoured).
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { withoutNpxOptions } from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { copyWorkingTree, repo } from './scratch.js';

const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'animal-store-pull-request-'));
const origin = join(work, 'origin.git');
const author = ['-c', 'user.name=contributor', '-c', 'user.email=contributor@test'];

type Step = {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
};
type Workflow = { on: { pull_request?: { paths?: string[] } }; jobs: Record<string, { steps: Step[] }> };
const workflow = (name: string) =>
  parse(readFileSync(join(repo, '.github/workflows', name), 'utf8')) as Workflow;

/** A pull request: what its branch changes in a checkout of main, with the changesets it adds. */
type Case = { name: string; change: (dir: string) => void };
const edit = (dir: string, file: string, from: string, to: string) => {
  const text = readFileSync(join(dir, file), 'utf8');
  if (!text.includes(from)) throw new Error(`${file} no longer holds ${JSON.stringify(from)}`);
  writeFileSync(join(dir, file), text.replace(from, to));
};
const changeset = (dir: string, name: string, releases: Record<string, string>, summary: string) =>
  writeFileSync(
    join(dir, '.changeset', `${name}.md`),
    `---\n${Object.entries(releases)
      .map(([pkg, bump]) => `"${pkg}": ${bump}\n`)
      .join('')}---\n\n${summary}\n`,
  );
const nickname = (dir: string) =>
  edit(
    dir,
    'spec/openapi/components/schemas/NewPet.yaml',
    'examples:\n  - name: Rex',
    '  nickname:\n    type: string\n    maxLength: 40\n    description: What the animal answers to.\nexamples:\n  - name: Rex',
  );
const adminNote = (dir: string) =>
  edit(
    dir,
    'spec/admin/components/schemas/NewKey.yaml',
    'properties:\n  plan:',
    'properties:\n  note:\n    type: string\n    maxLength: 200\n    description: A note for support.\n  plan:',
  );
const spec = '@animal-store/spec';

const cases: (Case & { ci: RegExp | 0; review: RegExp | 0 | 'not run' })[] = [
  {
    name: 'an additive field recorded by a minor changeset',
    change: (dir) => {
      nickname(dir);
      changeset(dir, 'nickname', { [spec]: 'minor' }, 'Pets may carry a `nickname`.');
    },
    ci: 0,
    review: 0,
  },
  {
    name: 'an additive field with no changeset',
    change: nickname,
    ci: /ships 1 changed file\(s\) of @animal-store\/spec and adds no changeset naming it/,
    review: /need a minor changeset of @animal-store\/spec added by this change \(found: none\)/,
  },
  {
    name: 'an additive field under-rated by a patch changeset',
    change: (dir) => {
      nickname(dir);
      changeset(dir, 'nickname', { [spec]: 'patch' }, 'Pets may carry a `nickname`.');
    },
    ci: /changes a contract: .*need a minor changeset.*found: patch/,
    review: /need a minor changeset.*found: patch in \.changeset\/nickname\.md/,
  },
  {
    name: 'an additive admin field under-rated by a patch changeset',
    change: (dir) => {
      adminNote(dir);
      changeset(dir, 'key-note', { [spec]: 'patch' }, 'Keys may carry a note.');
    },
    ci: /changes a contract: .*need a minor changeset.*found: patch/,
    review: /need a minor changeset.*found: patch in \.changeset\/key-note\.md/,
  },
  {
    name: 'a client type change recorded only for the server',
    change: (dir) => {
      edit(
        dir,
        'packages/client/src/index.ts',
        "export type { NewPet, Pet, PetStatus } from './generated/spec/index.js';",
        "export type { NewPet, Pet, PetStatus } from './generated/spec/index.js';\nexport type PetName = string;",
      );
      changeset(dir, 'pet-name', { '@animal-store/server': 'minor' }, 'A name type.');
    },
    ci: /of @animal-store\/client and adds no changeset naming it[\s\S]*packages\/client\/src\/index\.ts/,
    review: 0, // a changeset changed: the review runs, and finds no contract change
  },
  {
    name: 'a contract change (a description) covered only by an empty changeset',
    change: (dir) => {
      edit(
        dir,
        'spec/openapi/components/schemas/Pet.yaml',
        'An animal as returned',
        'An animal, as returned',
      );
      writeFileSync(join(dir, '.changeset/wording.md'), '---\n---\n\nWording.\n');
    },
    ci: /of @animal-store\/spec and adds no changeset naming it \(an empty changeset covers no contract change/,
    review: 0, // a patch: spec:diff asks no bump
  },
  {
    name: 'getPet removed before its sunset, with a major changeset announcing it',
    change: (dir) => {
      edit(dir, 'spec/openapi/openapi.yaml', '  /pets/{petId}:\n    $ref: paths/pets_{petId}.yaml\n', '');
      unlinkSync(join(dir, 'spec/openapi/paths/pets_{petId}.yaml'));
      changeset(dir, 'remove-get-pet', { [spec]: 'major' }, 'Remove getPet (GET /pets/{petId}).');
    },
    ci: /getPet \(GET \/pets\/\{petId\}\) is gone from the spec before its sunset, 2030-12-05/,
    review: 0, // rated major, recorded by a major changeset: the sunset is the CI guard's to refuse
  },
];

let mergeSha: string[] = [];
const git = (cwd: string, ...args: string[]) =>
  exec('git', [...author, ...args], { cwd, maxBuffer: 1 << 26 });

beforeAll(async () => {
  // main: this repository's history, then its working tree (tracked and new files, not ignored) as a commit.
  await exec('git', ['clone', '-q', '--bare', '--no-local', repo, origin]);
  await git(origin, 'config', 'uploadpack.allowAnySHA1InWant', 'true'); // GitHub serves a pull request's sha
  const main = join(work, 'main');
  await exec('git', ['clone', '-q', origin, main]);
  await git(main, 'checkout', '-q', '-B', 'main', 'HEAD');
  await git(main, 'rm', '-rq', '--cached', '.');
  for (const entry of readdirSync(main)) if (entry !== '.git') rmSync(join(main, entry), { recursive: true });
  await copyWorkingTree(main);
  await git(main, 'add', '-A');
  await git(main, 'commit', '-q', '--allow-empty', '-m', 'The working tree');
  await git(main, 'push', '-q', 'origin', 'main');
  // Each case: a branch of main, and GitHub's merge commit of it into main (refs/pull/N/head and merge).
  mergeSha = [];
  for (const [index, { change }] of cases.entries()) {
    const n = index + 1;
    await git(main, 'checkout', '-q', '-B', `case-${n}`, 'main');
    change(main);
    await git(main, 'add', '-A');
    await git(main, 'commit', '-q', '-m', `Case ${n}`);
    await git(main, 'checkout', '-q', '--detach', 'main');
    await git(main, 'merge', '-q', '--no-ff', '--no-edit', `case-${n}`);
    await git(main, 'push', '-q', 'origin', `case-${n}:refs/pull/${n}/head`, `HEAD:refs/pull/${n}/merge`);
    mergeSha.push((await git(main, 'rev-parse', 'HEAD')).stdout.trim());
  }
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The workspace actions/checkout@v4 leaves for pull request `n` at `depth` (0: all history). */
async function checkout(n: number, depth: number): Promise<string> {
  const dir = mkdtempSync(join(work, `pr-${n}-depth-${depth}-`));
  await git(dir, 'init', '-q');
  await git(dir, 'remote', 'add', 'origin', `file://${origin}`);
  if (depth === 0)
    await git(
      dir,
      'fetch',
      '-q',
      '--prune',
      'origin',
      '+refs/heads/*:refs/remotes/origin/*',
      '+refs/tags/*:refs/tags/*',
    );
  const sha = mergeSha[n - 1] as string;
  const shallow = depth > 0 ? [`--depth=${depth}`] : [];
  await git(
    dir,
    'fetch',
    '-q',
    '--no-tags',
    '--prune',
    ...shallow,
    'origin',
    `+${sha}:refs/remotes/pull/${n}/merge`,
  );
  await git(dir, 'checkout', '-q', '--force', `refs/remotes/pull/${n}/merge`);
  return dir;
}

/** A workflow expression as GitHub fills it in for this pull request; anything else is this test's to learn. */
function expression(
  text: string,
  context: Record<string, string>,
  outputs: Record<string, Record<string, string>>,
) {
  const value = (name: string) => {
    const step = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(name);
    if (step) return outputs[step[1] as string]?.[step[2] as string] ?? '';
    if (name in context) return context[name] as string;
    throw new Error(`the test does not know the expression ${name}`);
  };
  const comparison = /^([\w.-]+) (==|!=) (?:'([^']*)'|([\w.-]+))$/.exec(text.trim());
  if (comparison) {
    const [, left, op, literal, right] = comparison;
    const equal = value(left as string) === (literal ?? value(right as string));
    return String(op === '==' ? equal : !equal);
  }
  return value(text.trim());
}

/**
 * Runs the job's steps in `dir` as the runner does, up to and including the step `last` names (all of them
 * without): `uses:` steps are the checkout (done) and actions this machine cannot run (skipped); a `run:`
 * step whose `if:` is false is skipped. The job's verdict: 0, or the failing step's output.
 */
async function runJob(file: string, dir: string, n: number, last?: (step: Step) => boolean) {
  const [job] = Object.values(workflow(file).jobs);
  const context = {
    'github.base_ref': 'main',
    'github.head_ref': `case-${n}`,
    'github.repository': 'animal-store/animal-store',
    'github.event.pull_request.head.repo.full_name': 'animal-store/animal-store',
  };
  const outputs: Record<string, Record<string, string>> = {};
  let log = '';
  for (const step of job?.steps ?? []) {
    const condition = step.if?.replace(/^\$\{\{|\}\}$/g, '');
    if (condition !== undefined && expression(condition, context, outputs) !== 'true') continue;
    if (step.run) {
      const script = step.run.replace(/\$\{\{([^}]*)\}\}/g, (_, e: string) =>
        expression(e, context, outputs),
      );
      const output = join(work, `output-${n}-${Math.random().toString(36).slice(2)}`);
      writeFileSync(output, '');
      const env = {
        ...withoutNpxOptions(),
        CI: 'true',
        GITHUB_ACTIONS: 'true',
        GITHUB_EVENT_NAME: 'pull_request',
        GITHUB_BASE_REF: 'main',
        GITHUB_HEAD_REF: `case-${n}`,
        GITHUB_REF: `refs/pull/${n}/merge`,
        GITHUB_SHA: mergeSha[n - 1] as string,
        GITHUB_WORKSPACE: dir,
        GITHUB_OUTPUT: output,
        GITHUB_STEP_SUMMARY: `${dir}.summary`,
      };
      appendFileSync(env.GITHUB_STEP_SUMMARY, '');
      const result = await exec('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
        cwd: dir,
        env,
        maxBuffer: 1 << 26,
      }).then(
        (r) => ({ code: 0, text: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({
          code: e.code,
          text: e.stdout + e.stderr,
        }),
      );
      log += result.text;
      if (step.id)
        outputs[step.id] = Object.fromEntries(
          readFileSync(output, 'utf8')
            .split('\n')
            .filter((line) => line.includes('='))
            .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
        );
      if (result.code !== 0) return { code: result.code, log: `${log}\n(step: ${step.name ?? step.run})` };
    }
    if (last?.(step)) break;
  }
  return { code: 0, log };
}

/** The depth actions/checkout fetches in `file`: its `fetch-depth`, else 1. */
const depthOf = (file: string) => {
  const [job] = Object.values(workflow(file).jobs);
  const step = job?.steps.find((s) => s.uses?.startsWith('actions/checkout@'));
  expect(step).toBeDefined();
  return Number(step?.with?.['fetch-depth'] ?? 1);
};

/** Whether the spec review runs for pull request `n`: a changed file matches its `paths` filter. */
async function reviewRuns(n: number): Promise<boolean> {
  const paths = workflow('spec-review.yml').on.pull_request?.paths ?? ['**'];
  const { stdout } = await exec('git', ['diff', '--name-only', 'main', `refs/pull/${n}/head`], {
    cwd: origin,
  });
  const matches = (file: string) =>
    paths.some((glob) => new RegExp(`^${glob.replaceAll('.', '\\.').replaceAll('**', '.*')}$`).test(file));
  return stdout.split('\n').filter(Boolean).some(matches);
}

const verdict = (expected: RegExp | 0, result: { code: number; log: string }) => {
  if (expected === 0) expect(result, result.log).toMatchObject({ code: 0 });
  else {
    expect(result.code, result.log).not.toBe(0);
    expect(result.log).toMatch(expected);
  }
};

// Concurrent: each case is a checkout, an install and a guard run of its own (seconds each, mostly waiting).
describe.concurrent('a pull request, as GitHub checks it out and the workflows judge it', () => {
  it.each(cases.map((c, i) => [c.name, i + 1] as const))(
    'ci.yml (its checkout, its guard step): %s',
    async (_, n) => {
      const dir = await checkout(n, depthOf('ci.yml'));
      const result = await runJob('ci.yml', dir, n, (step) => step.name === 'The guards');
      verdict(cases[n - 1]?.ci as RegExp | 0, result);
    },
  );

  it.each(cases.map((c, i) => [c.name, i + 1] as const))(
    'spec-review.yml (its checkout, its steps): %s',
    async (_, n) => {
      const expected = cases[n - 1]?.review;
      expect(await reviewRuns(n)).toBe(expected !== 'not run');
      if (expected === 'not run') return;
      const dir = await checkout(n, depthOf('spec-review.yml'));
      const result = await runJob('spec-review.yml', dir, n);
      // What the comment posts: the review the diff step wrote.
      const review = readFileSync(join(dir, 'spec-diff.md'), 'utf8');
      verdict(expected as RegExp | 0, { ...result, log: `${result.log}\n${review}` });
      expect(review).toMatch(/^Reviewed: this change \(since origin\/main, [0-9a-f]{7}\)/);
      // The review is in the job's summary too, where a fork's pull request shows it.
      expect(readFileSync(`${dir}.summary`, 'utf8')).toBe(review);
    },
  );

  it('a checkout whose history cannot be fetched is refused with one line, never a silent pass', async () => {
    const dir = await checkout(2, 1);
    await git(dir, 'remote', 'set-url', 'origin', join(work, 'gone.git'));
    const result = await runJob('ci.yml', dir, 2, (step) => step.name === 'The guards');
    expect(result.code, result.log).not.toBe(0);
    expect(result.log).toMatch(
      /changeset guard: this checkout is shallow and its history could not be fetched/,
    );
  });
});
