import { readFile } from 'node:fs/promises';
import { RunFileError } from '../errors.js';
import { parseRunExport, type RunExport } from './run-export.js';

/**
 * Reads a run file written by `npm run replay -- --export`; throws a
 * {@link RunFileError} naming the file and its problem (unreadable, not JSON,
 * another schema or `schema_version`, a malformed field).
 */
export async function readRunFile(path: string): Promise<RunExport> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new RunFileError(path, `cannot read the file: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RunFileError(path, `not JSON: ${(error as Error).message}`);
  }
  return parseRunExport(value, path);
}
