import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium } from '@cairn/services';
import { chromium, type Browser } from 'playwright-core';

/** Flags of every test browser: headless, no sandbox (containers), nothing phoning home. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launches the machine's chromium (never a downloaded browser) headless through playwright-core; suites skip without one (`requiresChromium()`). */
export function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath)
    throw new Error('no chromium binary: the suite should have been skipped (requiresChromium)');
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}

/** Where the tests leave their screenshots (`CAIRN_SCREENSHOT_DIR`, else a folder under the temp dir). */
export function screenshotPath(name: string): string {
  const dir = process.env.CAIRN_SCREENSHOT_DIR ?? join(tmpdir(), 'cairn-ui-screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
