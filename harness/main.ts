// The process entry: bin/netrepro.js runs the compiled copy (dist/harness/main.js); in development
// `npm run dev -- ARGS` runs this file through tsx.
import { main } from './cli.ts';

process.exit(await main(process.argv));
