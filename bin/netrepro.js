#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx netrepro` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../harness/cli.ts');
