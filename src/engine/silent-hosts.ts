/**
 * Hosts of other sites that held a tenant's page past the third-party bound without an
 * answer: the tenant's next pages go on without them at once (their requests fail as after a
 * network error, as the cut makes them fail), instead of each waiting out the bound again. A
 * site's pages share their CDNs and tag hosts; one silent host cost every page of a build the
 * whole bound. Kept per tenant (one tenant's silent hosts never change another's pages) and for
 * a while only: a host that comes back is waited for again by one page after that.
 */

/** How long a host that never answered is gone without for a tenant's next pages. */
export const SILENT_HOST_MS = 10 * 60_000
/** Hosts kept per tenant, the oldest going first. */
const MAX_HOSTS_PER_TENANT = 50
/** Tenants kept, the least recently seen going first. */
const MAX_TENANTS = 200

export class SilentHosts {
  /** Per tenant, each host's end (ms since the epoch), in the order they were found. */
  readonly #byTenant = new Map<string, Map<string, number>>()
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** The tenant's hosts still to be gone without. */
  of(tenant: string): string[] {
    const hosts = this.#byTenant.get(tenant)
    if (!hosts) return []
    const now = this.#now()
    for (const [host, until] of hosts) if (until <= now) hosts.delete(host)
    if (hosts.size === 0) this.#byTenant.delete(tenant)
    return [...hosts.keys()]
  }

  /** Hosts that held one of the tenant's pages past the bound without an answer. */
  add(tenant: string, authorities: Iterable<string>): void {
    const found = [...authorities]
    if (found.length === 0) return
    const hosts = this.#byTenant.get(tenant) ?? new Map<string, number>()
    // Most recently seen last: the least recently seen tenant goes first.
    this.#byTenant.delete(tenant)
    this.#byTenant.set(tenant, hosts)
    const until = this.#now() + SILENT_HOST_MS
    for (const host of found) {
      hosts.delete(host)
      hosts.set(host, until)
    }
    for (const host of hosts.keys()) {
      if (hosts.size <= MAX_HOSTS_PER_TENANT) break
      hosts.delete(host)
    }
    for (const oldest of this.#byTenant.keys()) {
      if (this.#byTenant.size <= MAX_TENANTS) break
      this.#byTenant.delete(oldest)
    }
  }
}
