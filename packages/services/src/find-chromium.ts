import { findBinary } from './find-binary.js';

/** Environment variable naming the chromium binary to use; when set, nothing else is searched (a path that does not exist means "no chromium on this machine"). */
export const CHROMIUM_VAR = 'CAIRN_CHROMIUM';

/** Path of a `chromium` binary: `CAIRN_CHROMIUM` when set, else on PATH or at /usr/bin/chromium; undefined when there is none. */
export function findChromium(): string | undefined {
  return findBinary('chromium', CHROMIUM_VAR, '/usr/bin/chromium');
}
