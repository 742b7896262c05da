// The reference service: `startService(options)` → `{ url, close() }`; in memory, in
// SQLite with `dataDir`, or on Redis with `redisUrl` (many processes, `role` api, worker or
// all); the Chromium engine unless `engine` replaces it. The CLI is the
// `critical-css-service` bin.
export { startService, type RunningService, type ServiceOptions, type ServiceRole, type ServiceToken } from './service/server.ts'
export { EngineError, type Engine, type EngineInput } from './engine/engine.ts'
