#!/usr/bin/env node
/**
 * azd's preprovision hook (azure.yaml): refuses to provision without ALERT_EMAIL, who gets the alerts
 * (bicep/main.bicepparam reads it; main.bicep stops a deployment without it too). A hook sees the
 * azd environment's values over the process environment, so `azd env set ALERT_EMAIL ...` and a
 * variable set in CI (.github/workflows/deploy.yml) both count (scripts/azd-env.js says where azd
 * does this).
 */
'use strict';

/** Why `value` will not do as ALERT_EMAIL, in one line; null when it will. */
function alertEmailProblem(value) {
  const hint = 'azd env set ALERT_EMAIL you@example.com';
  if (value === undefined || value.trim() === '') {
    return `ALERT_EMAIL is not set: the alerts need someone to go to. Set it, then provision again: ${hint}`;
  }
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value.trim())) {
    return `ALERT_EMAIL ${JSON.stringify(value)} is not an e-mail address: ${hint}`;
  }
  return null;
}

module.exports = { alertEmailProblem };

if (require.main === module) {
  const problem = alertEmailProblem(process.env.ALERT_EMAIL);
  if (problem !== null) {
    process.stderr.write(`${problem}\n`);
    process.exitCode = 1;
  }
}
