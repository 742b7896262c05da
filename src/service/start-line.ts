/**
 * What a service says when it starts, so the operator's first minute needs no guessing:
 * where it listens, where its state is, how many pages it renders at once with which
 * browser, what its pages may fetch, and the command that makes a token for this very
 * state (it works when copied: no placeholder, no secret).
 */
import { resolve } from 'node:path'

/** The env var naming the Redis state when --redis is not given. */
export const REDIS_ENV = 'CRITICAL_CSS_REDIS_URL'

/** Where the state is, as the start options name it. */
export interface StatePlace {
  dataDir?: string | undefined
  redisUrl?: string | undefined
}

/** Quoted for a POSIX shell only when it must be. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

/** A Redis URL without what it authenticates with, and whether it had any. */
function withoutCredentials(url: string): { shown: string; hidden: boolean } {
  if (!URL.canParse(url)) return { shown: 'redis://…', hidden: true }
  const parsed = new URL(url)
  const hidden = parsed.username !== '' || parsed.password !== ''
  parsed.username = ''
  parsed.password = ''
  return { shown: parsed.href, hidden }
}

/** The state in a few words: a data directory (absolute), Redis (without credentials), or memory. */
export function stateShown(place: StatePlace): string {
  if (place.redisUrl !== undefined) return `Redis at ${withoutCredentials(place.redisUrl).shown}`
  if (place.dataDir !== undefined) return `SQLite in ${resolve(place.dataDir)}`
  return 'in memory (kept by nothing: tokens come from the start options)'
}

/**
 * The command that makes a token for this state, or null when the state is in memory (a
 * token is then a start option). A Redis URL with credentials is not printed: the command
 * reads it from the environment instead.
 */
export function tokenCommand(place: StatePlace, plan = 'pro'): string | null {
  const command = `critical-css-service token create --plan ${plan}`
  if (place.redisUrl !== undefined) {
    const { shown, hidden } = withoutCredentials(place.redisUrl)
    return `${command} --redis ${hidden ? `"$${REDIS_ENV}"` : shellWord(shown)}`
  }
  if (place.dataDir !== undefined) return `${command} --data-dir ${shellWord(resolve(place.dataDir))}`
  return null
}
