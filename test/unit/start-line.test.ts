/**
 * The service's start line and token command as an operator copies them: absolute paths,
 * quoted for the shell where needed, and no Redis password anywhere.
 */
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatLogLine } from '../../src/service/log-lines.ts'
import { stateShown, tokenCommand } from '../../src/service/start-line.ts'

describe('the token command', () => {
  it('names the data dir by its absolute path, quoted when the shell would split it', () => {
    expect(tokenCommand({ dataDir: './critical-css-data' })).toBe(`critical-css-service token create --plan pro --data-dir ${resolve('critical-css-data')}`)
    expect(tokenCommand({ dataDir: "/srv/it's data" })).toBe(`critical-css-service token create --plan pro --data-dir '/srv/it'\\''s data'`)
  })

  it('names a Redis URL without credentials as it is, and one with credentials only through the env var', () => {
    expect(tokenCommand({ redisUrl: 'redis://10.0.0.5:6379/2' })).toBe('critical-css-service token create --plan pro --redis redis://10.0.0.5:6379/2')
    const secret = 'redis://ops:s3cr3t-pw@10.0.0.5:6379'
    expect(tokenCommand({ redisUrl: secret })).toBe('critical-css-service token create --plan pro --redis "$CRITICAL_CSS_REDIS_URL"')
    expect(stateShown({ redisUrl: secret })).toBe('Redis at redis://10.0.0.5:6379')
  })

  it('is null for a state in memory: tokens are then start options', () => {
    expect(tokenCommand({})).toBeNull()
  })
})

describe('the text log', () => {
  const start = { event: 'listening', url: 'http://127.0.0.1:8787', role: 'all', state: 'SQLite in /srv/data', workers: 2, renders: 'Chromium 156.0.8078.108 (/usr/bin/chromium)', privateNetworks: false, allowedOrigins: ['https://staging.internal:8443'], tokenCommand: 'critical-css-service token create --plan pro --data-dir /srv/data' }

  it('says the start in one line: URL, state, workers and browser, policy, token command', () => {
    expect(formatLogLine(start, 'text')).toBe(
      'critical-css-service listening on http://127.0.0.1:8787 · state: SQLite in /srv/data · 2 pages at once on Chromium 156.0.8078.108 (/usr/bin/chromium) · fetches public addresses only, and https://staging.internal:8443 · make a token: critical-css-service token create --plan pro --data-dir /srv/data\n',
    )
  })

  it('writes other events as time, event and fields; json keeps every field with the time', () => {
    const time = new Date('2026-11-26T09:00:00.000Z')
    expect(formatLogLine({ event: 'request', method: 'POST', path: '/api/critical-css/generate', status: 202, ms: 3 }, 'text', time)).toBe('2026-11-26T09:00:00.000Z request method=POST path=/api/critical-css/generate status=202 ms=3\n')
    expect(JSON.parse(formatLogLine(start, 'json', time))).toEqual({ time: time.toISOString(), ...start })
  })
})
