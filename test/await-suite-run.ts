// setupFiles of the lab and host projects: a file of theirs starts once the suite run has ended
// (test/suite-run.global.ts starts it and lets the unit tests run meanwhile). Its labs then never run
// alongside the suite's: the host tests compare the machine before and after the suite, and read which
// of its labs were alive at the same time.
import { awaitSuiteRun } from './suite-run.ts';

await awaitSuiteRun();
