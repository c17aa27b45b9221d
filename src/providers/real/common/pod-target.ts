// A pod of a real cluster. Commands run in its `probe` container (netshoot), except our agent
// (AGENT_COMMAND), which runs in the `agent` container of the same pod: same network namespace,
// so the agent's queries leave from the pod IP just as in the netns lab.
import type { ExecOptions, SpawnOptions } from '../../../contract/command.ts';
import type { Target } from '../../../contract/provider.ts';
import type { KubeApi, PodRef } from './kube-api.ts';
import { AGENT_COMMAND } from './workload-objects.ts';

export class PodTarget implements Target {
  readonly ref: string;

  constructor(
    private readonly api: KubeApi,
    private readonly namespace: string,
    private readonly name: string,
    private readonly agentCommand: readonly string[] = AGENT_COMMAND,
  ) {
    this.ref = `pod/${name}`;
  }

  private where(argv: readonly string[]): PodRef {
    const agent = this.agentCommand.every((word, i) => argv[i] === word);
    return { namespace: this.namespace, name: this.name, container: agent ? 'agent' : 'probe' };
  }

  exec(argv: readonly string[], options?: ExecOptions) {
    return this.api.exec(this.where(argv), argv, options);
  }

  spawn(argv: readonly string[], _options?: SpawnOptions) {
    return this.api.spawn(this.where(argv), argv);
  }
}
