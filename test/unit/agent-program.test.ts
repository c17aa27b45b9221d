// src/contract/agent-program.ts: the pod agent's command line for each program a pod serves, the same on
// every provider (the netns lab, real clusters' serve containers, the local cluster's hosts).
import { describe, expect, it } from 'vitest';
import { agentProgramArgv } from '../../src/contract/agent-program.ts';

const agent = ['node', '/agent/pod-agent.mjs'];
const records = ['--record=web.default.svc.cluster.local=10.96.0.20'];

describe('agentProgramArgv', () => {
  it('each server names itself; only the DNS server takes the records', () => {
    expect(agentProgramArgv(agent, { http: 8080 }, 'web', records)).toEqual([
      ...agent,
      'http',
      '--port=8080',
      '--name=web',
    ]);
    expect(agentProgramArgv(agent, { udp: 80 }, 'web', records)).toEqual([...agent, 'udp', '--port=80', '--name=web']);
    expect(agentProgramArgv(agent, { dns: 53 }, 'dns', records)).toEqual([
      ...agent,
      'dns',
      '--port=53',
      '--name=dns',
      ...records,
    ]);
  });
});
