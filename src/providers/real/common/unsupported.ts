// A scenario a provider cannot run is a skip with the reason, never an error and never a silent
// substitute. Code UNSUPPORTED: the engine turns it into verdict `skipped` with the message as reason.
import { HarnessError } from '../../../model/errors.ts';

export class UnsupportedScenarioError extends HarnessError {
  readonly skipReason: string;
  constructor(provider: string, reason: string, hint?: string) {
    super('UNSUPPORTED', `${provider} cannot run this scenario: ${reason}`, hint);
    this.name = 'UnsupportedScenarioError';
    this.skipReason = `${provider}: ${reason}`;
  }
}
