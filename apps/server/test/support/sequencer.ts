// The order the server's test files start in (vitest.config.ts: sequence.sequencer): the longest first,
// whatever their project, so that three workers finish together rather than one running a two-minute file
// alone at the end. vitest's own order runs the projects one after another and, without the results of an
// earlier run (a clean clone has none), the larger files first within each: in a clean-clone run the
// SQLite project's slowest files started last and ran alone for about three minutes.
// The weights are measured seconds, the longest a file took on any project (a run's JSON report); a file not
// listed weighs little and fills the gaps. A wrong or missing weight costs time, never a result.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const secondsOf: Record<string, number> = {
  'own-engines/upgrade-from-every-release': 135,
  'sqlite-only/process': 134,
  'engine-faults/partitions': 100,
  'own-engines/alert-rules': 92,
  'sqlite-only/keys-command': 63,
  'every-topology/redis-failover': 58,
  'every-topology/billing': 47,
  'engine-faults/outage': 43,
  'sqlite-only/startup': 43,
  'engine-faults/postgres-faults': 42,
  'every-topology/scale-out': 38,
  'every-topology/quota-spread': 31,
  'sqlite-only/otlp-exporter': 30,
  'every-topology/leases': 27,
  'every-topology/pools': 24,
  'engine-faults/tracing': 23,
  'every-engine/http-server': 20,
  'every-topology/rate-limit': 20,
  'sqlite-only/docs': 18,
  'every-engine/auth': 12,
};

/** A file's expected seconds: its measured weight, else 1 (a few hundred milliseconds, mostly imports). */
export const weightOf = (path: string): number =>
  secondsOf[path.replace(/^.*?test\//, '').replace(/\.test\.ts$/, '')] ?? 1;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const group = (file: TestSpecification) => file.project.config.sequence.groupOrder;
    const weight = (file: TestSpecification) => weightOf(relative(root, file.moduleId));
    return [...files].sort((a, b) => group(a) - group(b) || weight(b) - weight(a));
  }
}
