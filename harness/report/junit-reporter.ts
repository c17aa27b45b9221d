// --junit FILE: one test suite per scenario, one test case per probe expectation of each phase.
import junitModule, { type Builder } from 'junit-report-builder';
import type { Reporter } from './reporter.ts';

// the package's types describe an ES default export; at run time module.exports is the builder itself
const junit = junitModule as unknown as Builder;
export function junitReporter(file: string): Reporter {
  return {
    async onRunEnd(result) {
      const builder = junit.newBuilder();
      for (const scenario of result.scenarios) {
        const suite = builder.testSuite().name(scenario.id).time(scenario.durationMs / 1000);
        if (scenario.verdict === 'skipped') suite.testCase().className(scenario.id).name('scenario').skipped();
        if (scenario.error) suite.testCase().className(scenario.id).name('lab').error(scenario.error.message, scenario.error.code);
        // a measurement reports numbers: they ride along as properties, not as passes
        scenario.measurements?.forEach((m, i) => suite.property(`measured.${i + 1}`, m));
        for (const phase of scenario.phases) {
          if (phase.status === 'errored' && phase.error) {
            suite.testCase().className(`${scenario.id}.${phase.variant}`).name(`${phase.name}: steps`).error(phase.error.message, phase.error.code);
          }
          for (const probe of phase.probes) {
            const test = suite
              .testCase()
              .className(`${scenario.id}.${phase.variant}`)
              .name(`${phase.name}: ${probe.id} expects ${probe.expected}`)
              .time(probe.durationMs / 1000)
              .standardOutput(probe.summary);
            if (!probe.matched) test.failure(probe.mismatch ?? 'expectation did not hold');
          }
          for (const check of phase.checks) {
            const test = suite.testCase().className(`${scenario.id}.${phase.variant}`).name(`${phase.name}: check ${check.id} expects ${check.expected}`).standardOutput(check.evidence.join('\n'));
            if (!check.matched) test.failure(`observed ${check.observed}`);
          }
        }
      }
      builder.writeTo(file);
    },
  };
}
