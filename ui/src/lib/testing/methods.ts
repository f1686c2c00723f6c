// Method declarations for tests: the settings a method without a paper's
// own runs with, as the engine declares them (MethodDefaults::COMMON).
import type { MethodDefaults } from "$lib/bindings/MethodDefaults";

export const COMMON_DEFAULTS: MethodDefaults = { k: 5, temperature: null, sampling: null };
