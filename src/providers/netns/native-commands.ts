// From the first lab on, every command of this process goes through the native spawner
// (agent/spawner.c, src/contract/native-spawner.ts): built once per source version and started once.
// Where it cannot be built, or with NETREPRO_SPAWNER=0, commands keep node:child_process.
import { useSpawner } from '../../contract/command.ts';
import { NativeSpawner } from '../../contract/native-spawner.ts';
import { helperBinary } from '../namespaces/helper-build.ts';

let started: Promise<void> | undefined;

export function useNativeSpawner(): Promise<void> {
  if (process.env.NETREPRO_SPAWNER === '0') return Promise.resolve();
  started ??= helperBinary('spawner').then(
    (binary) =>
      useSpawner(
        new NativeSpawner(binary, (why, signal) => {
          useSpawner(undefined);
          // a Ctrl-C or SIGTERM to the process group ended it too: the run's own interrupt line says what happens
          if (signal !== 'SIGINT' && signal !== 'SIGTERM')
            process.stderr.write(`netrepro: ${why}; commands run through node:child_process from now on\n`);
        }),
      ),
    () => {}, // no gcc: node:child_process it is
  );
  return started;
}
