// Errors with a stable code and a hint that says what to do. The CLI maps codes to exit codes.

export type ErrorCode =
  | 'SCENARIO_INVALID' // exit 2
  | 'USAGE' // exit 2
  | 'ENVIRONMENT' // exit 3
  | 'COMMAND_FAILED' // exit 1
  | 'LAB_FAILED' // exit 1
  | 'STEP_FAILED' // exit 1: a fault or fix step did not do what it is for; the phase is errored
  | 'ABORTED' // exit 130/143
  | 'UNSUPPORTED'; // a provider cannot do what a scenario needs: the scenario is skipped, with the reason

export class HarnessError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly hint?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'HarnessError';
  }
}

// What a report says of any thrown value: a HarnessError's code and hint, anything else as INTERNAL.
export function errorFields(e: unknown): { code: ErrorCode | 'INTERNAL'; message: string; hint?: string } {
  if (e instanceof HarnessError) return { code: e.code, message: e.message, hint: e.hint };
  return { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) };
}

export interface ValidationIssue {
  file: string;
  line: number;
  column: number;
  field: string;
  message: string;
  received?: string;
  expected?: string;
}

export class ScenarioValidationError extends HarnessError {
  constructor(
    readonly issues: ValidationIssue[],
    hint = 'fix the fields named above; `netrepro validate FILE` checks a file without running it',
  ) {
    super('SCENARIO_INVALID', issues.map(formatIssue).join('\n'), hint);
    this.name = 'ScenarioValidationError';
  }
}

/** `file:line:column: field: message (received ..., expected ...)`; line 0 means the file as a whole. */
export function formatIssue(issue: ValidationIssue): string {
  const where = issue.line > 0 ? `${issue.file}:${issue.line}:${issue.column}` : issue.file;
  const field = issue.field ? ` ${issue.field}:` : '';
  const got =
    issue.received !== undefined
      ? ` (received ${issue.received}${issue.expected ? `, expected ${issue.expected})` : ')'}`
      : issue.expected
        ? ` (expected ${issue.expected})`
        : '';
  return `${where}:${field} ${issue.message}${got}`;
}

export class CommandFailedError extends HarnessError {
  constructor(
    readonly argv: readonly string[],
    readonly exitCode: number | undefined,
    readonly stdout: string,
    readonly stderr: string,
    readonly where?: string,
  ) {
    const tail = (s: string) => s.trim().split('\n').slice(-5).join('\n');
    super(
      'COMMAND_FAILED',
      `command failed${where ? ` on ${where}` : ''} (exit ${exitCode ?? 'signal'}): ${pasteable(argv)}` +
        (stderr.trim() ? `\n${tail(stderr)}` : stdout.trim() ? `\n${tail(stdout)}` : ''),
      'run the command above by hand to see the full output',
    );
    this.name = 'CommandFailedError';
  }
}

/** Quote argv so a person can paste it into a shell. */
export function pasteable(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)).join(' ');
}
