// `reap({force})`: each real provider removes its own leftovers by the run prefix, keeping runs whose
// owner process (the owner file in the run's work directory) is alive unless forced; `clean` loops over them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createProvider } from '../../src/providers/create-provider.ts';
import { resolveRunConfig } from '../../src/providers/run-config.ts';
import { fakeTools } from './fake-env.ts';

let fakes: ReturnType<typeof fakeTools> | undefined;
afterEach(() => fakes?.restore());

async function providerWithLiveRun(name: 'kind' | 'minikube' | 'k3s', replies: Parameters<typeof fakeTools>[0]) {
  fakes = fakeTools(replies);
  const work = `${fakes.dir}/work`;
  // run abc123 is still going (this process owns it); def456's owner is gone
  mkdirSync(`${work}/abc123`, { recursive: true });
  writeFileSync(`${work}/abc123/owner.json`, JSON.stringify({ pid: process.pid }));
  mkdirSync(`${work}/def456`, { recursive: true });
  writeFileSync(`${work}/def456/owner.json`, JSON.stringify({ pid: 2 ** 22 + 1 })); // above pid_max: no such process
  return createProvider(resolveRunConfig({ provider: name }, { NETREPRO_WORK_DIR: work }));
}

describe('providers reap their leftovers', () => {
  it('kind: clusters of dead runs only, all of them with force', async () => {
    const list = { tool: 'kind', args: ['get', 'clusters'], stdout: 'kind\nnr-abc123-cluster\nnr-def456-cluster\n' };
    const kind = await providerWithLiveRun('kind', [list]);
    expect(await kind.reap({ force: false })).toEqual([
      'kind cluster nr-def456-cluster',
      expect.stringMatching(/^run directory \/.*\/def456$/),
    ]);
    // forced: the live run's directory goes too
    expect(await kind.reap({ force: true })).toEqual([
      'kind cluster nr-abc123-cluster',
      'kind cluster nr-def456-cluster',
      expect.stringMatching(/^run directory \/.*\/abc123$/),
    ]);
    expect(fakes!.lines().filter((l) => l.startsWith('kind delete'))).toEqual([
      'kind delete cluster --name nr-def456-cluster',
      'kind delete cluster --name nr-abc123-cluster',
      'kind delete cluster --name nr-def456-cluster',
    ]);
  });

  it('k3s: labelled containers of dead runs', async () => {
    const ps = {
      tool: 'docker',
      args: ['ps'],
      stdout: 'c1\tnr-abc123-cluster\tabc123\nc2\tnr-def456-cluster\tdef456\n',
    };
    const k3s = await providerWithLiveRun('k3s', [ps]);
    expect(await k3s.reap({ force: false })).toEqual([
      'container nr-def456-cluster',
      expect.stringMatching(/^run directory \/.*\/def456$/),
    ]);
  });
});
