// The order the server's suites start in. vitest's own (BaseSequencer) runs each project's files together,
// projects by name, and within a project the longest first as its cache remembers them or, without a cache
// (a clean clone: CI), the largest file first. The suites under own-engines/ are small files that run for
// minutes (they build and start earlier releases, start Prometheus): by size they started last of the
// sqlite project, the second to last, and the upgrade from every release (117 s) then ran on with the
// other two workers idle. Here each project's own-engines suites start first among its files.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

type Spec = { moduleId: string; project: { name: string } };

const startsOwnEngines = (spec: Spec) => spec.moduleId.includes('/test/own-engines/');

/** `files` in vitest's order, each project's own-engines suites moved to the front of its files. */
export function ownEnginesFirst<T extends Spec>(files: readonly T[]): T[] {
  const order: T[] = [];
  let project: T[] = [];
  const done = () => {
    order.push(...project.filter(startsOwnEngines), ...project.filter((f) => !startsOwnEngines(f)));
    project = [];
  };
  for (const file of files) {
    if (project[0] && project[0].project.name !== file.project.name) done();
    project.push(file);
  }
  done();
  return order;
}

export class OwnEnginesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return ownEnginesFirst(await super.sort(files));
  }
}
