/**
 * Debian's Chromium for the browser tests (tests/e2e/html-report.test.ts,
 * tests/e2e/console-browser.test.ts), driven by `playwright-core`: where it is, how it is launched,
 * and what a test file does without it (skips, saying so; under CI, fails).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export const chromiumAvailable = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** Loud on purpose, at the file's load: a skipped browser test must not pass unseen. */
export function warnWhenSkipped(what: string): void {
  if (!chromiumAvailable && !inCi) {
    console.warn(`SKIPPED ${what}: no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  }
}

/**
 * Under CI a missing Chromium is a failure: registers the failing test and returns true, and the
 * describe block registers nothing more.
 */
export function failsWithoutChromiumUnderCi(): boolean {
  if (chromiumAvailable || !inCi) return false;
  it('needs Chromium under CI', () => {
    throw new Error(`CI=true and no Chromium at ${CHROMIUM}: .ci/run must install Debian's chromium`);
  });
  return true;
}
