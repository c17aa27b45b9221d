#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, which `npm ci` and `npm install` run as `prepare`).
import module from 'node:module';

// Node >= 22.1 keeps compiled bytecode between runs (NODE_COMPILE_CACHE); Node 20 has no such cache
/** @type {{ enableCompileCache?: () => unknown }} */ (module).enableCompileCache?.();
try {
  await import('../dist/cli/main.js');
} catch (e) {
  const err = /** @type {NodeJS.ErrnoException} */ (e);
  if (err.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('/dist/cli/main.js')) throw e;
  process.stderr.write(
    'netrepro: not built (dist/cli/main.js is missing)\nhint: npm run build (npm ci runs it); `npm run dev -- ARGS` runs the TypeScript sources\n',
  );
  process.exit(3);
}
