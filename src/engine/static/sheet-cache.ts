/**
 * The static engine's HTTP cache of stylesheets, as a browser's: per tenant (one tenant's
 * responses never answer another's request, as a browser context of the Chromium engine keeps
 * its HTTP cache to its token), and only for what the response allows (`max-age` and
 * freshness, never `no-store` or `no-cache`). A site's pages link the same sheets: a build's
 * next page takes them from here, as the tenant's warm browser page does from its cache.
 */

/** A stylesheet as it was received: its text, and where it ended up. */
export interface CachedSheet {
  text: string
  url: string
}

/** CSS characters a thread keeps, every tenant together (the least recently used tenant goes first). */
const MAX_CHARS = 16 * 1024 * 1024
const MAX_AGE = /(?:^|,)\s*(?:s-)?max-age\s*=\s*"?(\d+)/i
const NOT_STORED = /(?:^|,)\s*(?:no-store|no-cache)\b/i

interface Entry extends CachedSheet {
  freshUntil: number
}

export class SheetCache {
  readonly #byTenant = new Map<string, Map<string, Entry>>()
  #chars = 0
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** The tenant's fresh copy of `url`, if it has one. */
  get(tenant: string | undefined, url: string): CachedSheet | null {
    if (tenant === undefined) return null
    const sheets = this.#byTenant.get(tenant)
    const entry = sheets?.get(url)
    if (!sheets || !entry) return null
    if (entry.freshUntil <= this.#now()) {
      sheets.delete(url)
      this.#chars -= entry.text.length
      return null
    }
    // Most recently used tenant last: the least recently used goes first when the cache is full.
    this.#byTenant.delete(tenant)
    this.#byTenant.set(tenant, sheets)
    return entry
  }

  /** Keeps a response the tenant received, when its headers let a cache keep it. */
  set(tenant: string | undefined, url: string, sheet: CachedSheet, headers: { cacheControl: string | undefined; age: string | undefined }): void {
    if (tenant === undefined || sheet.text.length > MAX_CHARS) return
    const control = headers.cacheControl ?? ''
    const maxAge = MAX_AGE.exec(control)
    if (maxAge === null || NOT_STORED.test(control)) return
    const lifetime = Number(maxAge[1]) - (Number(headers.age) || 0)
    if (!(lifetime > 0)) return
    const sheets = this.#byTenant.get(tenant) ?? new Map<string, Entry>()
    this.#byTenant.delete(tenant)
    this.#byTenant.set(tenant, sheets)
    const known = sheets.get(url)
    if (known) this.#chars -= known.text.length
    sheets.set(url, { ...sheet, freshUntil: this.#now() + lifetime * 1000 })
    this.#chars += sheet.text.length
    for (const [oldest, kept] of this.#byTenant) {
      if (this.#chars <= MAX_CHARS) break
      for (const entry of kept.values()) this.#chars -= entry.text.length
      this.#byTenant.delete(oldest)
    }
  }
}
