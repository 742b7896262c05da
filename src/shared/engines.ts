/**
 * The engines of this package, by name: what jobs, reports and cache keys call the one that
 * made a page's CSS, and what the `engine` option, `--engine` and `CRITICAL_CSS_ENGINE` may
 * choose (`auto`: Chromium when a browser is found and starts, else static).
 */
export const ENGINE_NAMES = ['chromium', 'static'] as const
export type EngineName = (typeof ENGINE_NAMES)[number]

export const ENGINE_CHOICES = ['auto', ...ENGINE_NAMES] as const
export type EngineChoice = (typeof ENGINE_CHOICES)[number]
