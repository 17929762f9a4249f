// The public surface of @agent-saga/cli, for tests and for embedding the commands. Named exports only.
export { createProgram, runCli } from './program.js';
export { ExitCode, CliUsageError, CliFailure, type CliIo } from './cli-io.js';
export { databaseConfigSchema, type DatabaseConfig } from './database.js';
export { apiConfigSchema, type ApiConfig } from './api-config.js';
export { formatTable, type Column } from './format-table.js';
export { bundleRoles, BUNDLED_ROLES, type BundledRole, type BundledFile } from './bundle/bundle-roles.js';
