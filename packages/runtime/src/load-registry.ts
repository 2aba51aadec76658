import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  OpenAIChatModel,
  OpenAIResponsesModel,
  parseModelLimits,
  parseModelPrices,
  Registry,
  type Model,
  type ModelLimit,
  type ModelPrices,
} from '@cairn/engine';
import { ConfigError } from './errors.js';

/** What `CAIRN_MODEL` and the OpenAI variables say. */
export interface ModelSpecOptions {
  /** `scripted`, `openai:<model>` or `openai-chat:<model>`. */
  model: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  /** `CAIRN_MODEL_STREAM`: false for a server whose stream drops tool calls. @defaultValue true */
  modelStream?: boolean;
}

/**
 * The API key sent to an OpenAI-compatible server when `OPENAI_API_KEY` is
 * unset: local servers (Ollama, vLLM, LM Studio) ignore it, but the openai
 * client refuses to start without one.
 */
export const KEYLESS_SERVER_API_KEY = 'no-key-needed';

/**
 * The model overriding every entity, or undefined for `scripted` (the registry's own scripted models).
 * `openai-chat:` without a key sends {@link KEYLESS_SERVER_API_KEY}. `logger` hears, once, that the
 * model stopped streaming for a server that streams badly (see `StreamFallback`).
 */
export function modelFromSpec(
  options: ModelSpecOptions,
  logger?: { warn(obj: object, msg?: string): void },
): Model | undefined {
  const { model, openaiApiKey: apiKey, openaiBaseUrl: baseURL, modelStream: stream } = options;
  if (model === 'scripted') return undefined;
  const [provider, ...rest] = model.split(':');
  const name = rest.join(':');
  if (provider === 'openai' && name) {
    if (!apiKey) throw new ConfigError('OPENAI_API_KEY', `is required for CAIRN_MODEL=${model}`);
    return new OpenAIResponsesModel({ model: name, apiKey, baseURL, stream, logger });
  }
  if (provider === 'openai-chat' && name) {
    if (!apiKey && !baseURL) {
      throw new ConfigError(
        'OPENAI_API_KEY',
        `is required for CAIRN_MODEL=${model} on the OpenAI API; for an OpenAI-compatible server that needs no key, set OPENAI_BASE_URL to it instead`,
      );
    }
    return new OpenAIChatModel({
      model: name,
      apiKey: apiKey || KEYLESS_SERVER_API_KEY,
      baseURL,
      stream,
      logger,
    });
  }
  throw new ConfigError(
    'CAIRN_MODEL',
    `must be "scripted", "openai:<model>" or "openai-chat:<model>", got "${model}"`,
  );
}

/** What a registry module gives: its registry, and the app context its optional `createContext()` builds. */
export interface LoadedRegistryModule {
  registry: Registry;
  /** Undefined when the module exports no `createContext`. */
  context: unknown;
  /** The module's `modelLimits` export, parsed; empty when it has none. */
  modelLimits: ModelLimit[];
  /** The module's `modelPrices` export, parsed; empty when it has none. */
  modelPrices: ModelPrices;
}

/**
 * Imports the registry module (`CAIRN_REGISTRY`: a package name, a file path
 * or a `file:` URL) and calls its `createRegistry({ model })`. The result is
 * checked by brand, not `instanceof`, so a registry built by another copy of
 * `@cairn/engine` (another bundle or install) is accepted.
 */
export async function loadRegistry(moduleName: string | URL, model?: Model): Promise<Registry> {
  return (await loadRegistryModule(moduleName, model)).registry;
}

/**
 * {@link loadRegistry}, and the module's optional `createContext()`: the app
 * context its tools receive as `ctx.context`, built in the thread that runs
 * them (an execution thread cannot be handed one built elsewhere).
 */
export async function loadRegistryModule(
  moduleName: string | URL,
  model?: Model,
): Promise<LoadedRegistryModule> {
  const specifier = registrySpecifier(moduleName);
  let loaded: {
    createRegistry?: unknown;
    createContext?: unknown;
    modelLimits?: unknown;
    modelPrices?: unknown;
  };
  try {
    loaded = (await import(specifier)) as typeof loaded;
  } catch (cause) {
    throw new ConfigError(
      'CAIRN_REGISTRY',
      `cannot import "${moduleName}": ${(cause as Error).message}`,
    );
  }
  if (typeof loaded.createRegistry !== 'function') {
    throw new ConfigError(
      'CAIRN_REGISTRY',
      `"${moduleName}" does not export createRegistry({ model? })`,
    );
  }
  const registry: unknown = await (loaded.createRegistry as (o: { model?: Model }) => unknown)(
    model ? { model } : {},
  );
  if (!Registry.isRegistry(registry)) {
    throw new ConfigError(
      'CAIRN_REGISTRY',
      `createRegistry() of "${moduleName}" did not return a Registry`,
    );
  }
  if (loaded.createContext !== undefined && typeof loaded.createContext !== 'function') {
    throw new ConfigError('CAIRN_REGISTRY', `createContext of "${moduleName}" must be a function`);
  }
  const context: unknown =
    typeof loaded.createContext === 'function'
      ? await (loaded.createContext as () => unknown)()
      : undefined;
  return {
    registry,
    context,
    modelLimits: modelLimitsOf(loaded.modelLimits, moduleName),
    modelPrices: modelPricesOf(loaded.modelPrices, moduleName),
  };
}

/** The registry module's `modelPrices`, parsed: a malformed entry fails the start, named. */
function modelPricesOf(value: unknown, moduleName: string | URL): ModelPrices {
  if (value === undefined) return new Map();
  try {
    return parseModelPrices(value, `modelPrices of "${String(moduleName)}"`);
  } catch (error) {
    throw new ConfigError('CAIRN_REGISTRY', (error as Error).message);
  }
}

/** The registry module's `modelLimits`, parsed: a malformed entry fails the start, named. */
function modelLimitsOf(value: unknown, moduleName: string | URL): ModelLimit[] {
  if (value === undefined) return [];
  try {
    return parseModelLimits(value, `modelLimits of "${String(moduleName)}"`);
  } catch (error) {
    throw new ConfigError('CAIRN_REGISTRY', (error as Error).message);
  }
}

function registrySpecifier(moduleName: string | URL): string {
  if (moduleName instanceof URL) return moduleName.href;
  return moduleName.startsWith('.') || isAbsolute(moduleName)
    ? pathToFileURL(resolve(moduleName)).href
    : moduleName;
}
