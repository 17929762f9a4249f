// Entry point of the `agent-saga` command (bin/agent-saga.mjs). The only module of the CLI that touches
// `process`: everything else receives its environment and output streams as a `CliIo`.
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
