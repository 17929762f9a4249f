/**
 * `pnpm sandbox`: runs the four fake vendor APIs and the admin API until SIGINT/SIGTERM, printing where
 * each listens and the credentials they accept.
 */
import { loadSandboxOptions } from './config.js';
import { startSandbox } from './start-sandbox.js';

const sandbox = await startSandbox(loadSandboxOptions(process.env));
const { urls, credentials: c } = sandbox;
process.stdout.write(
  [
    'agent-saga sandbox listening:',
    `  stripe    ${urls.stripe}   (STRIPE_API_BASE; key ${c.stripeSecretKey})`,
    `  jira      ${urls.jira}   (JIRA_BASE_URL; ${c.jiraEmail} / ${c.jiraApiToken}; project SUP)`,
    `  email     ${urls.email}   (EMAIL_API_BASE; key ${c.emailApiKey})`,
    `  shipping  ${urls.shipping}   (SHIPPING_API_BASE; key ${c.shippingApiKey})`,
    `  admin     ${urls.admin}/__admin   (faults, ledger, config, seed, requests, reset)`,
    '',
  ].join('\n'),
);

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    sandbox.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`sandbox close failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  });
}
