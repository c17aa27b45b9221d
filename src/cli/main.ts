// The process entry: bin/netrepro.js runs the compiled copy (dist/cli/main.js); in development
// `npm run dev -- ARGS` runs this file through tsx.
import { main } from './build-cli.ts';

process.exit(await main(process.argv));
