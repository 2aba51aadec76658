import { Registry } from '@cairn/engine';
import { supportTeam } from './agents.js';

/** What the worker serves: loaded by each execution thread. */
export function createRegistry(): Registry {
  return new Registry({ teams: [supportTeam] });
}
