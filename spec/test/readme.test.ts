// The README works as written: every fenced shell command either runs here (on a throwaway database) or
// is named below with the reason it does not (it starts the server, needs one, or is the test command).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDatabase, withoutNpxOptions } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
// The README's commands, and those of the keys page it sends readers to.
const readme = ['README.md', 'docs/keys.md'].map((page) => readFileSync(join(root, page), 'utf8')).join('\n');
const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
  (m[1] as string)
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean),
);

/** Commands that cannot run inside the test suite, and why. */
const notRunHere: [RegExp, string][] = [
  [
    /^npx -y -p node@24 -p pnpm@10 -c 'pnpm install --frozen-lockfile && pnpm start'$/,
    'starts the server and keeps running',
  ],
  [
    /^npx -y -p node@24 -p pnpm@10 -c 'pnpm install --frozen-lockfile && pnpm test'$/,
    'is the test command itself',
  ],
  [/^curl /, 'needs a running server and its printed key'],
  [/^export ADMIN_TOKEN=/, 'sets the admin token for the two commands after it, which need a server'],
  [
    /^ADMIN_PORT=3001 ADMIN_TOKENS=\$ADMIN_TOKEN npx -y -p node@24 -p pnpm@10 -c 'pnpm start'$/,
    'starts the server with its admin API and keeps running: apps/server/test/every-topology/billing.test.ts starts it so',
  ],
  [
    /--filter @animal-store\/client build && cd packages\/client && pnpm pack'$/,
    'packs the client: packages/contract-tests/test/fresh-clone.test.ts runs it as written on a fresh clone',
  ],
  [
    /^cd \/path\/to\/your-app && npm install \/path\/to\/animal-store\/packages\/client\//,
    "runs in the reader's app: consumer.test.ts installs the packed client alone in a fresh project",
  ],
];

/** A command in the README's form, `npx -y -p node@24 -p pnpm@10 -c '<inner>'`: its inner command. */
const inner = (command: string) => /^npx -y -p node@24 -p pnpm@10 -c '(pnpm [^']*)'$/.exec(command)?.[1];

describe('README commands', () => {
  it('are all accounted for', () => {
    expect(commands.length).toBeGreaterThan(5);
    for (const command of commands) {
      const known = notRunHere.some(([pattern]) => pattern.test(command)) || inner(command) !== undefined;
      expect(known, command).toBe(true);
    }
  });

  it('the pnpm commands run as written on a fresh database, and --json prints JSON only', async () => {
    const env = { ...process.env, DATABASE_URL: tempDatabase() };
    const runnable = commands.filter((c) => !notRunHere.some(([pattern]) => pattern.test(c)) && inner(c));
    expect(runnable.length).toBeGreaterThanOrEqual(4);
    for (const [i, command] of runnable.entries()) {
      // The first exactly as printed (npx fetches Node 24 and pnpm); the others as the README says to run
      // them where Node 24 and pnpm are on the PATH already (as here): the part in quotes.
      const { stdout } = await promisify(execFile)(
        'sh',
        ['-c', i === 0 ? command : (inner(command) as string)],
        {
          cwd: root,
          env: i === 0 ? withoutNpxOptions(env) : env,
          maxBuffer: 1 << 24,
        },
      );
      if (command.includes('--json')) {
        // Build banners go to stderr: stdout holds the JSON document (after pnpm's own script header).
        const json = stdout.slice(stdout.search(/^[[{]/m));
        expect(() => JSON.parse(json), command).not.toThrow();
      }
    }
  }, 600_000); // builds and starts through npx: minutes on a machine busy with other suites
});

describe('the README as a map', () => {
  const pages = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
  const text = (page: string) => readFileSync(join(root, page), 'utf8');
  /** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
  const anchor = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
  const anchors = (page: string) =>
    new Set([...text(page).matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1] as string)));

  it('links every page in docs/', () => {
    const readmeText = text('README.md');
    expect(pages.length).toBeGreaterThan(10);
    for (const page of pages) expect(readmeText, page).toContain(`](docs/${page})`);
  });

  it.each(['README.md', ...pages.map((page) => `docs/${page}`)])(
    '%s links only to files and headings that exist',
    (page) => {
      const links = [...text(page).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
      for (const link of links.filter((l) => !/^[a-z]+:/.test(l))) {
        const [path, hash] = link.split('#') as [string, string | undefined];
        const target = path === '' ? page : join(dirname(page), path);
        expect(existsSync(join(root, target)), `${page}: ${link}`).toBe(true);
        if (hash && target.endsWith('.md')) expect(anchors(target), `${page}: ${link}`).toContain(hash);
      }
    },
  );
});
