// The process entry: bin/netrepro.js runs the compiled copy (dist/cli/main.js); in development
// `npm run dev -- ARGS` runs this file through tsx.
import { scenarioCacheWritten } from '../model/scenario-cache.ts';
import { main } from './build-cli.ts';

const code = await main(process.argv);
await scenarioCacheWritten(); // best effort, and quick: one small file renamed into place
process.exit(code);
