// Part of the build: tsc compiles the console's routes to dist/console/, and this copies the files they
// serve (src/console/assets: plain HTML, CSS and ES modules, no build step of their own) beside them, so
// dist/console/console-routes.js finds ./assets/ as src/console/console-routes.ts does. A fresh copy each
// time: an asset deleted from src does not linger in dist.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const from = join(import.meta.dirname, '../src/console/assets');
const to = join(import.meta.dirname, '../dist/console/assets');
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
