import { Registry } from '@cairn/engine';
import { supportTeam, type SupportContext } from './agents.js';

/** @public What the worker serves: loaded by each execution thread. */
export function createRegistry(): Registry {
  return new Registry({ teams: [supportTeam] });
}

/** @public The app context of every tool call, built in the thread that runs the tools. */
export function createContext(): SupportContext {
  return { warehouse: { stockOf: (item) => item.length } };
}
