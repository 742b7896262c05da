// The reference service: `startService(options)` → `{ url, close() }`; in memory, or in
// SQLite with `dataDir`; the Chromium engine unless `engine` replaces it. The CLI is the
// `critical-css-service` bin.
export { startService, type RunningService, type ServiceOptions, type ServiceToken } from './service/server.ts'
export { EngineError, type Engine, type EngineInput } from './engine/engine.ts'
