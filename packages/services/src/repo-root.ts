import { fileURLToPath } from 'node:url';

/** The repository root (this file sits in packages/services/src). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
