/**
 * Which addresses the service refuses to fetch for a caller: loopback, private, link-local
 * (cloud metadata lives there), multicast, unspecified and other special ranges, and
 * anything but http(s). Checked on the URL at generate (an IP literal or `localhost` → 400)
 * and again on what its hostname resolves to before the job runs (→ failed `blocked_url`).
 */
import { BlockList, isIP } from 'node:net'
import type { Admission } from '../engine/egress.ts'
import { resolveHost } from '../engine/resolve.ts'

const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT; 100.100.100.200 is a cloud metadata address
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local; 169.254.169.254 is the cloud metadata address
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 of any IPv4, private ones included
  ['fc00::', 7], // unique local; fd00:ec2::254 is a cloud metadata address
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6')
}

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i

/** True when an IP address is one the service must not fetch for a caller. */
export function isBlockedAddress(address: string): boolean {
  const mapped = MAPPED_V4.exec(address)
  if (mapped) return isBlockedAddress(mapped[1]!)
  const family = isIP(address)
  if (family === 4) return blocked.check(address, 'ipv4')
  if (family === 6) return blocked.check(address, 'ipv6')
  return true
}

/**
 * The host as every check sees it: the URL parser has already lowered the case and turned
 * international names into punycode; the brackets of an IPv6 literal go, and so does the
 * trailing dot of a fully qualified name (`localhost.` is `localhost` to every resolver).
 */
function hostOf(url: URL): string {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return host.replace(/\.$/, '')
}

/** Why the URL itself is refused (scheme, IP literal, localhost), or null. DNS comes later. */
export function refusedUrl(url: URL): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} URLs are not fetched`
  const host = hostOf(url)
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`
  if (isIP(host) && isBlockedAddress(host)) return `${host} is a loopback, private, link-local or otherwise internal address`
  return null
}

export type Resolver = (hostname: string) => Promise<string[]>

/** DNS with bounded attempts, then the system's other sources (the engine's resolver: one for every check). */
export const systemResolver: Resolver = resolveHost

/**
 * Why the URL's host resolves somewhere refused, or null. A name that does not resolve is
 * refused too: the browser resolves on its own, and may find what the check could not.
 */
export async function refusedResolution(url: URL, resolve: Resolver): Promise<string | null> {
  const host = hostOf(url)
  if (isIP(host)) return isBlockedAddress(host) ? `${host} is an internal address` : null
  let addresses: string[]
  try {
    addresses = await resolve(host)
  } catch {
    return `${host} does not resolve`
  }
  if (addresses.length === 0) return `${host} does not resolve`
  const inside = addresses.find(isBlockedAddress)
  return inside ? `${host} resolves to ${inside}, an internal address` : null
}

/** What the service may fetch for a caller, as every check (generate, before a job, the egress proxy) asks it. */
export interface NetworkPolicy {
  /** Why the URL itself is refused (scheme, internal literal, loopback name), or null. */
  refusedUrl(url: URL): string | null
  /** Why where the URL's host resolves is refused, or null. */
  refusedResolution(url: URL): Promise<string | null>
  /**
   * One connection to `host:port`, for a request in one of `schemes` (a CONNECT tunnel may
   * carry https or a WebSocket): the name resolved once, every address checked, and the
   * addresses to connect to, so a second lookup can never answer differently (DNS rebinding).
   */
  admit(host: string, port: number, schemes: readonly string[]): Promise<Admission>
}

export interface NetworkPolicyOptions {
  /** Everything is allowed: the embedded mode, bound to loopback. */
  allowPrivateNetworks: boolean
  /** Origins fetched even when internal (an internal staging site); `scheme://host:port`. */
  allowOrigins: readonly string[]
  resolve: Resolver
}

/** The origin of an `allowOrigins` entry, or a TypeError that names the option. */
export function allowedOrigin(entry: string): string {
  const url = URL.canParse(entry) ? new URL(entry) : null
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new TypeError(`allowOrigins: ${JSON.stringify(entry)} is not an http(s) origin like https://staging.internal:8443.`)
  }
  return originOf(url)
}

/** `scheme://host:port` with the host as the checks see it (no trailing dot). */
function originOf(url: URL): string {
  const host = hostOf(url)
  return `${url.protocol}//${host.includes(':') ? `[${host}]` : host}${url.port ? `:${url.port}` : ''}`
}

/** The URL of a connection's target, so its host is normalised (case, IDNA, brackets) as a page URL's is; null when it is no host. */
function targetUrl(scheme: string, host: string, port: number): URL | null {
  const literal = isIP(host) === 6 ? `[${host}]` : host
  const text = `${scheme}//${literal}:${port}`
  return URL.canParse(text) ? new URL(text) : null
}

export function createNetworkPolicy(options: NetworkPolicyOptions): NetworkPolicy {
  const allowAll = options.allowPrivateNetworks
  const allowed = new Set(options.allowOrigins.map(allowedOrigin))
  const isAllowed = (url: URL): boolean => allowAll || ((url.protocol === 'http:' || url.protocol === 'https:') && allowed.has(originOf(url)))
  return {
    refusedUrl: (url) => (isAllowed(url) ? null : refusedUrl(url)),
    refusedResolution: async (url) => (isAllowed(url) ? null : refusedResolution(url, options.resolve)),
    async admit(host, port, schemes) {
      const urls = schemes.map((scheme) => targetUrl(scheme, host, port))
      const url = urls[0]
      if (!url || urls.includes(null)) return { refused: `${host} is not a host name` }
      const open = urls.some((each) => each && isAllowed(each))
      const refused = open ? null : refusedUrl(url)
      if (refused) return { refused }
      const name = hostOf(url)
      if (isIP(name)) return { addresses: [name] }
      let addresses: string[]
      try {
        addresses = await options.resolve(name)
      } catch {
        return { unresolved: `${name} does not resolve` }
      }
      if (addresses.length === 0) return { unresolved: `${name} does not resolve` }
      const inside = open ? undefined : addresses.find(isBlockedAddress)
      return inside ? { refused: `${name} resolves to ${inside}, an internal address` } : { addresses }
    },
  }
}
