// The shipped Prometheus rules (deploy/prometheus/), with Prometheus's own tools: `promtool check rules`,
// `promtool test rules` with a test for every alert, and a real Prometheus scraping a running instance
// whose Redis is then stopped, which raises AnimalStoreRateLimitsPerInstance from the shipped file as it is.
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, spawnTied, spawnUntilReady, toolFor, untilListening } from '@animal-store/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { freshStore, processesStoppedAfterEach } from '../support/harness.js';

const rulesDir = fileURLToPath(new URL('../../../../deploy/prometheus/', import.meta.url));
const rulesFile = join(rulesDir, 'animal-store.rules.yml');
const promtool = toolFor('the Prometheus rules', 'promtool', 'prometheus');
const run = promisify(execFile);
const startProcess = processesStoppedAfterEach();
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('docs/observability.md and the rules', () => {
  it("each alert's row says when it fires in the words of its description, and none is missing", () => {
    const rules = readFileSync(rulesFile, 'utf8');
    const described = [...rules.matchAll(/- alert: (\w+)\n(?:.*\n)*?\s+description: "([^"]*)"/g)].map(
      ([, name, description]) => [name, description],
    );
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map(([, name]) => name);
    expect(described.map(([name]) => name)).toEqual(alerts); // every alert has its description
    const docs = readFileSync(
      fileURLToPath(new URL('../../../../docs/observability.md', import.meta.url)),
      'utf8',
    );
    const rows = new Map(
      [...docs.matchAll(/^\| `(AnimalStore\w+)` +\| (.+?) +\|/gm)].map(([, name, firesWhen]) => [
        name,
        firesWhen,
      ]),
    );
    expect(Object.fromEntries(described)).toEqual(Object.fromEntries(rows));
  });
});

describe.runIf(promtool)('the Prometheus rules', () => {
  it('pass promtool check rules', async () => {
    const { stdout } = await run(promtool as string, ['check', 'rules', rulesFile]);
    expect(stdout).toContain('SUCCESS');
  });

  it('pass promtool test rules, which raises every alert at least once', async () => {
    // Two files, each with its evaluation interval: the ticket tier's four days are evaluated every 10 min.
    const files = ['animal-store.rules.test.yml', 'animal-store.rules.ticket.test.yml'];
    const { stdout } = await run(promtool as string, ['test', 'rules', ...files], { cwd: rulesDir });
    expect(stdout.match(/SUCCESS/g)).toHaveLength(files.length);
    const tests = files.map((file) => readFileSync(join(rulesDir, file), 'utf8')).join('\n');
    const alerts = [...readFileSync(rulesFile, 'utf8').matchAll(/- alert: (\w+)/g)].map(([, name]) => name);
    expect(alerts.length).toBeGreaterThanOrEqual(18);
    // Each alert has a test case that expects it to fire (a non-empty exp_alerts after its name).
    const raised = [...tests.matchAll(/alertname: (\w+)\n\s+exp_alerts:\n\s+- /g)].map(([, name]) => name);
    expect(alerts.filter((name) => !raised.includes(name))).toEqual([]);
  });

  it('an idle instance fires nothing: its own /metrics, held for 15 minutes, raises no alert (promtool)', async () => {
    const server = await startProcess(await freshStore('postgres+redis'));
    // A scrape after two idle seconds, as Prometheus's next scrape would be: an interval the test measures
    // over, not a wait for a condition (the first seconds hold the start's own event-loop lag, which each
    // scrape resets; scraped at once, AnimalStoreEventLoopLag read the start-up).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const labels = 'instance="idle",job="animal-store"';
    const series = text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .flatMap((line) => {
        const [, name, own, value] = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line) ?? [];
        if (!name || !Number.isFinite(Number(value))) return [];
        return [{ series: `${name}{${labels}${own ? `,${own}` : ''}}`, values: `${value}+0x15` }];
      });
    expect(series.length).toBeGreaterThan(30);
    series.push({ series: `up{${labels}}`, values: '1+0x15' });
    const alerts = [...readFileSync(rulesFile, 'utf8').matchAll(/- alert: (\w+)/g)].map(([, name]) => name);
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-idle-'));
    const test = {
      rule_files: [rulesFile],
      evaluation_interval: '1m',
      tests: [
        {
          name: 'an idle instance',
          interval: '1m',
          input_series: series,
          alert_rule_test: alerts.flatMap((alertname) =>
            ['5m', '10m', '15m'].map((eval_time) => ({ eval_time, alertname, exp_alerts: [] })),
          ),
        },
      ],
    };
    writeFileSync(join(dir, 'idle.test.yml'), JSON.stringify(test)); // JSON is YAML
    const result = await run(promtool as string, ['test', 'rules', join(dir, 'idle.test.yml')]).catch(
      (error: { stdout: string; stderr: string }) => ({ stdout: `${error.stdout}${error.stderr}` }),
    );
    expect(result.stdout).toContain('SUCCESS');
  });

  it('a real Prometheus raises AnimalStoreRateLimitsPerInstance once the instance’s Redis is stopped', async () => {
    const redisPort = await freePort();
    const redis = spawnTied(
      toolFor('the live alert', 'redis-server') as string,
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    children.push(redis);
    await untilListening(redisPort, 'redis-server');
    const { DATABASE_URL } = await freshStore('postgres');
    const server = await startProcess({ DATABASE_URL, REDIS_URL: `redis://127.0.0.1:${redisPort}` });

    const dir = mkdtempSync(join(tmpdir(), 'animal-store-prometheus-'));
    const target = new URL(server.url).host;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: ["${rulesFile}"]`,
        'scrape_configs:',
        `  - { job_name: animal-store, static_configs: [{ targets: ["${target}"] }] }`,
      ].join('\n'),
    );
    const port = await freePort();
    const prometheus = await spawnUntilReady(
      toolFor('the live alert', 'prometheus') as string,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      {
        env: { PATH: process.env.PATH ?? '' },
        ready: /Server is ready to receive web requests/,
        timeoutMs: 30_000,
      },
    );
    children.push(prometheus.child);
    const api = async <T>(path: string) =>
      ((await (await fetch(`http://127.0.0.1:${port}/api/v1/${path}`)).json()) as { data: T }).data;
    type Alert = { labels: { alertname: string; instance: string }; state: string };
    const perInstance = async () =>
      (await api<{ alerts: Alert[] }>('alerts')).alerts.filter(
        (a) => a.labels.alertname === 'AnimalStoreRateLimitsPerInstance',
      );
    const every = (timeout: number) => ({ timeout, interval: 500 });
    // Scraped, with Redis up: the gauge reads 0 and nothing is pending.
    const gauge = async () =>
      (
        await api<{ result: { value: [number, string] }[] }>(
          'query?query=animal_store_rate_limits_per_instance',
        )
      ).result[0]?.value[1];
    await expect.poll(gauge, every(20_000)).toBe('0');
    expect(await perInstance()).toEqual([]);

    redis.kill('SIGKILL');
    // Pending at once, firing after the rule's `for` (1m).
    await expect.poll(async () => (await perInstance()).length, every(20_000)).toBeGreaterThan(0);
    await expect.poll(async () => (await perInstance())[0]?.state, every(100_000)).toBe('firing');
    expect((await perInstance())[0]?.labels.instance).toBe(target);
    await prometheus.stop();
  }, 180_000);
});
