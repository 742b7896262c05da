// The reference service: `startService(options)` → `{ url, close() }`. Issue 5 in progress:
// in-memory store only (no `dataDir` yet), no CLI yet, and no default engine until the
// Chromium engine lands: pass `engine`.
export { startService, type RunningService, type ServiceOptions, type ServiceToken } from './service/server.ts'
export { EngineError, type Engine, type EngineInput } from './service/engine.ts'
