#!/usr/bin/env node
// The `agent-saga` command. Runs the TypeScript sources through tsx, as the workspace does everywhere
// else, so there is no build step between editing the CLI and running it.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
