// A lab's commands: its targets and its root-namespace commands (namespaces, links, CNI plugins) run
// through the lab's own native spawner (agent/spawner.c, src/contract/native-spawner.ts), started with
// the lab and ended at its teardown. Where it cannot be built, once it is lost, or with
// NETREPRO_SPAWNER=0, they go through node:child_process; every other command of the process does anyway.
import { CommandRunner, defaultRunner } from '../../contract/command.ts';
import { nodeLaunch } from '../../contract/launch.ts';
import { NativeSpawner } from '../../contract/native-spawner.ts';
import { helperBinary } from '../namespaces/helper-build.ts';

/** The runner a lab's commands go through, and the end of what it started. */
export interface LabCommands {
  readonly runner: CommandRunner;
  /** Ends the lab's spawner: the last thing its teardown does. */
  close(): Promise<void>;
}

export async function startLabCommands(): Promise<LabCommands> {
  const unspawned: LabCommands = { runner: defaultRunner, close: async () => {} };
  if (process.env.NETREPRO_SPAWNER === '0') return unspawned;
  const binary = await helperBinary('spawner').catch(() => undefined); // no gcc: node:child_process it is
  if (!binary) return unspawned;
  let spawner: NativeSpawner | undefined = new NativeSpawner(binary, (why, signal) => {
    spawner = undefined;
    // a Ctrl-C or SIGTERM to the process group ended it too: the run's own interrupt line says what happens
    if (signal !== 'SIGINT' && signal !== 'SIGTERM')
      process.stderr.write(`netrepro: ${why}; the lab's commands run through node:child_process from now on\n`);
  });
  return {
    runner: new CommandRunner((argv, options) => (spawner ? spawner.spawn(argv, options) : nodeLaunch(argv, options))),
    close: async () => {
      const ending = spawner;
      spawner = undefined; // a command after the teardown still runs, through node:child_process
      await ending?.close();
    },
  };
}
