/**
 * What a build that will surely render begins as the bundler starts, instead of once its
 * pages are known, so that it overlaps the bundling: in embedded mode the service and the
 * browser (0.3–0.7 s), in remote mode the client and its usage read (a round trip, and the
 * connection's set-up). Surely: the cache holds nothing (its directory is missing or
 * empty, or the cache is off). A build with any cache entry begins nothing early: it may
 * render nothing, and then it sends no request and starts no browser. The adapter begins
 * it and releases it when the build ends; the build's run takes it over when it renders.
 */
import { readdirSync } from 'node:fs'
import { cacheDirOf } from '../cache.ts'
import type { ResolvedOptions } from '../options.ts'
import { startForBuild } from './embedded.ts'
import type { EmbeddedService } from './embedded-service.ts'
import { beginRemote, type RemoteStart } from './remote.ts'

export interface EarlyStart {
  /** Begins now when this build will surely render (`root`: the project root the cache is below). */
  begin(root: string): void
  /** The embedded service begun early, once: who takes it closes it. Null when none was begun. */
  takeEmbedded(): Promise<EmbeddedService> | null
  /** Remote mode's client begun early, once: who takes it closes it. Null when none was begun. */
  takeRemote(): RemoteStart | null
  /** Closes what was begun early that no run took (a build that failed, or rendered nothing). */
  release(): Promise<void>
}

export function createEarlyStart(options: ResolvedOptions): EarlyStart {
  let embedded: Promise<EmbeddedService> | null = null
  let remote: RemoteStart | null = null
  return {
    begin(root) {
      if (embedded !== null || remote !== null) return
      const cacheDir = cacheDirOf(options.cache, root)
      if (cacheDir !== null && !isEmptyOrMissing(cacheDir)) return
      if (options.service !== null) {
        remote = beginRemote(options, options.service, cacheDir)
        return
      }
      embedded = startForBuild(options)
      // A browser that cannot start is said by the run that needs it, with its hint.
      embedded.catch(() => {})
    },
    takeEmbedded() {
      const taken = embedded
      embedded = null
      return taken
    },
    takeRemote() {
      const taken = remote
      remote = null
      return taken
    },
    async release() {
      const [service, client] = [embedded, remote]
      embedded = null
      remote = null
      await client?.client.close()
      await (await service?.catch(() => null))?.close()
    },
  }
}

function isEmptyOrMissing(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0
  } catch {
    return true
  }
}
