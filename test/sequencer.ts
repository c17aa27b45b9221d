// The order vitest starts test files in. On a fresh clone it has no durations yet and starts the
// largest files first, which puts the small files with the longest labs last: the other worker then
// idles through them. The files named here start first in their sequence.groupOrder group, the longest
// first (measured on 2 cores: mutate ~60 s, the capture round trip ~30 s, the next ~15 s); everything
// else keeps vitest's order (its own durations once it has them).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONGEST = ['test/scenarios/mutate.test.ts', 'test/lab/capture-import-roundtrip.test.ts'];

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST.findIndex((path) => f.moduleId.endsWith(`/${path}`));
      return i < 0 ? LONGEST.length : i;
    };
    // stable: vitest's order within a group and rank
    return sorted
      .map((file, i) => ({ file, i }))
      .sort(
        (a, b) =>
          a.file.project.config.sequence.groupOrder - b.file.project.config.sequence.groupOrder ||
          rank(a.file) - rank(b.file) ||
          a.i - b.i,
      )
      .map(({ file }) => file);
  }
}
