// The runtime check every entry runs first (runtime.ts), against the package's own engines range.
import { describe, expect, it } from 'vitest';
import { supportedNode, unsupportedRuntime } from './version.js';

describe('the supported Node.js lines', () => {
  it('come from the package manifest', () => {
    expect(supportedNode).toBe('>=22.12.0');
  });

  it.each(['v22.12.0', 'v22.23.3', 'v24.21.0', 'v26.9.0'])('%s runs the service', (version) => {
    expect(unsupportedRuntime(version)).toBeUndefined();
  });

  it.each(['v20.20.2', 'v22.11.0', 'v18.20.8'])(
    '%s is refused in one line naming both versions',
    (version) => {
      const problem = unsupportedRuntime(version);
      expect(problem).toContain(`this is Node.js ${version}`);
      expect(problem).toContain('>=22.12.0');
      expect(problem).not.toContain('\n');
    },
  );

  it('the Node.js running these tests is one of them', () => {
    expect(unsupportedRuntime()).toBeUndefined();
  });
});
