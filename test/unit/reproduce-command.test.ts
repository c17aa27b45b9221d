// The command that reproduces a scenario: the knobs that change a run are repeated, shell-quoted; the ones
// about this machine's files are not.
import { describe, expect, it } from 'vitest';
import { reproducingEnv } from '../../src/cli/env-knobs.ts';
import { reproduceCommand, shellWord } from '../../src/report/reproduce-command.ts';

describe('reproduce command', () => {
  it('repeats the run-changing NETREPRO_* knobs, not the machine-only ones nor other variables', () => {
    const env = {
      NETREPRO_CNI: 'bridge',
      NETREPRO_CACHE: '/x',
      NETREPRO_K8S_VERSION: 'v1.20.2',
      HOME: '/root',
      CI: '1',
    };
    expect(reproducingEnv(env, shellWord)).toEqual(['NETREPRO_K8S_VERSION=v1.20.2', 'NETREPRO_CNI=bridge']);
  });

  it('names a shipped scenario by id and another by its file, quoting what a shell would split', () => {
    const invocation = { bin: 'npx netrepro', env: ["NETREPRO_CNI='a b'"] };
    expect(reproduceCommand('s', 'kind', { shipped: true, file: 'x/s.yaml' }, invocation)).toBe(
      "NETREPRO_CNI='a b' npx netrepro run s --provider kind",
    );
    expect(
      reproduceCommand('s', 'netns', { shipped: false, file: "my dir/it's.yaml", appliedProfile: 'p' }, invocation),
    ).toBe(`NETREPRO_CNI='a b' npx netrepro run 'my dir/it'\\''s.yaml' --provider netns --profile p`);
  });
});
