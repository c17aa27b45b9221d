#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx netrepro` needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../harness/cli.ts');
process.exit(await main(process.argv));
