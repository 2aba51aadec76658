import {
  mergeModelLimits,
  type CapacitySettings,
  type ModelCapacity,
  type ModelLimit,
} from '@cairn/engine';

/** What a worker's capacity settings are made of. */
export interface CapacityConfig {
  /** `CAIRN_MODEL_LIMITS`. */
  modelLimits: readonly ModelLimit[];
  /** `CAIRN_CAPACITY_WAIT_MS`. */
  capacityWaitMs: number;
  /** `CAIRN_CAPACITY_LINE`. */
  capacityLine: boolean;
  /** `CAIRN_TENANT_WEIGHTS`. */
  tenantWeights: Readonly<Record<string, number>>;
}

/**
 * An engine's capacity settings: the registry module's `modelLimits` with
 * `CAIRN_MODEL_LIMITS` over them (the environment wins per model), the
 * wait before a run parks and the tenants' weights.
 */
export function capacitySettingsOf(
  limiter: ModelCapacity,
  config: CapacityConfig,
  registryLimits: readonly ModelLimit[],
  onError: (error: unknown) => void,
): CapacitySettings {
  return {
    limiter,
    limits: mergeModelLimits(registryLimits, config.modelLimits),
    waitMs: config.capacityWaitMs,
    line: config.capacityLine,
    tenantWeights: new Map(Object.entries(config.tenantWeights)),
    onError,
  };
}
