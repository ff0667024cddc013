// The change a guard judges, found the same way by the changeset guard, the sunset guard and spec:diff, on a
// contributor's branch and on GitHub's checkout of a pull request (a detached merge commit, often shallow):
// - the base: `--base <ref>`, else the pull request's base branch (`GITHUB_BASE_REF`, as origin/<branch>),
//   else main on any other branch; the change is what the working tree adds to its merge base with HEAD. On
//   main itself it is what is not committed yet.
// - the last release: the commit that last set the server's version (docs/releasing.md).
// Both need history. A shallow checkout fetches it from origin; when that fails, or a base cannot be found,
// the guard refuses with one line that says what is missing: a guard that sees no history judges nothing.
import { spawnSync } from 'node:child_process';

export type Change = {
  /** The commit the change is judged against. */
  base: string;
  /** How the guard's messages name the change. */
  label: string;
  /** The last release commit, if the history has one. */
  release: string | undefined;
};

/** Thrown when the checkout cannot show the change: the guard prints its message and exits 2. */
export class MissingHistory extends Error {}

function git(root: string, ...command: string[]): string | undefined {
  const result = spawnSync('git', command, { cwd: root, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** Fetches the rest of a shallow checkout's history (and `branch` of origin, when given) or throws. */
function unshallow(root: string, branch: string | undefined) {
  if (git(root, 'rev-parse', '--is-shallow-repository') !== 'true') return;
  const refspec = branch ? [`+refs/heads/${branch}:refs/remotes/origin/${branch}`] : [];
  const fetched = spawnSync('git', ['fetch', '--quiet', '--no-tags', '--unshallow', 'origin', ...refspec], {
    cwd: root,
    encoding: 'utf8',
  });
  if (fetched.status !== 0)
    throw new MissingHistory(
      `this checkout is shallow and its history could not be fetched from origin (${fetched.stderr.trim().split('\n').at(-1)}); ` +
        'check it out with its history (actions/checkout: fetch-depth: 0)',
    );
}

/** Makes `origin/<branch>` present (a depth-0 checkout of a pull request has it; a fetch gets it otherwise). */
function fetchBranch(root: string, branch: string) {
  if (git(root, 'rev-parse', '--verify', '--quiet', `origin/${branch}^{commit}`)) return;
  git(root, 'fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`);
}

/** The change under review in the checkout at `root` (see the header); throws MissingHistory. */
export function changeUnderReview(root: string, requested?: string): Change {
  if (git(root, 'rev-parse', '--git-dir') === undefined)
    throw new MissingHistory('not a git checkout: there is no history to judge a change against');
  const pullRequestBase = process.env.GITHUB_BASE_REF || undefined;
  unshallow(root, requested ? undefined : pullRequestBase);
  let ref = requested;
  if (!ref && pullRequestBase) {
    fetchBranch(root, pullRequestBase);
    ref = `origin/${pullRequestBase}`;
  }
  if (!ref && git(root, 'symbolic-ref', '--quiet', '--short', 'HEAD') !== 'main')
    ref = ['main', 'origin/main'].find((name) => git(root, 'rev-parse', '--verify', '--quiet', name));
  const release = git(root, 'log', '-1', '--format=%H', '-G"version":', '--', 'apps/server/package.json');
  if (!ref) return { base: 'HEAD', label: 'the uncommitted change', release: release || undefined };
  if (!git(root, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`))
    throw new MissingHistory(`the base ${ref} is not in this checkout; fetch it, or pass --base <ref>`);
  const base = git(root, 'merge-base', ref, 'HEAD');
  if (!base) throw new MissingHistory(`${ref} and HEAD share no history; fetch it, or pass --base <ref>`);
  const head = git(root, 'rev-parse', 'HEAD');
  return {
    base: base === head ? 'HEAD' : base,
    label: base === head ? 'the uncommitted change' : `this change (since ${ref}, ${base.slice(0, 7)})`,
    release: release || undefined,
  };
}

/** changeUnderReview for a command line: on MissingHistory, prints `<tool>: <what is missing>` and exits 2. */
export function changeOrExit(tool: string, root: string, requested?: string): Change {
  try {
    return changeUnderReview(root, requested);
  } catch (error) {
    if (!(error instanceof MissingHistory)) throw error;
    process.stderr.write(`${tool}: ${error.message}; nothing was judged.\n`);
    process.exit(2);
  }
}
