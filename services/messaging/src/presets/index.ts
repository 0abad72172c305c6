/** Presets: the org's saved replies. */
export * as presets from './presets';
