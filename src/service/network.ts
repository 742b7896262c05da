/**
 * Which addresses the service refuses to fetch for a caller: every special-purpose range
 * (loopback, private, link-local where cloud metadata lives, documentation, benchmarking,
 * translation and tunnel prefixes that carry an IPv4 address inside), multicast, the IPv6
 * space IANA has not allocated for global unicast, the machine's own interface addresses,
 * and anything but http(s). Checked on the URL at generate (an IP literal or `localhost` →
 * 400) and again on what its hostname resolves to before the job runs (→ failed
 * `blocked_url`). A refusal names the URL's host as the caller gave it, never the address a
 * name resolved to: that would tell any tenant where an internal name points.
 */
import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import type { Admission } from '../engine/egress.ts'
import { resolveHost } from '../engine/resolve.ts'

/** A refused block, `address/prefix`, and what it is. */
type Range = readonly [block: string, what: string]

/*
 * Every row of the IANA IPv4 Special-Purpose Address Registry
 * (https://www.iana.org/assignments/iana-ipv4-special-registry/) and of the IANA IPv6
 * Special-Purpose Address Registry (https://www.iana.org/assignments/iana-ipv6-special-registry/),
 * as their CSV exports (iana-ipv4-special-registry-1.csv, iana-ipv6-special-registry-1.csv)
 * stood when fetched on 2026-07-18; the IPv6 registry's XML gives it as last updated
 * 2025-10-09. Cross-checked with CPython's `ipaddress._private_networks` (Lib/ipaddress.py),
 * drawn from the same registries (it lacks 5f00::/16 and 100:0:0:1::/64, added since). When
 * IANA adds a row, add it here and to test/unit/network-policy.test.ts.
 *
 * Every row is refused, the ones the registry marks globally reachable too: those are
 * protocol anycasts (PCP, TURN, DNS-SD), DNS sinks (AS112), AMT relays and overlay
 * identifiers (ORCHIDv2, DETs), never a page a tenant needs rendered, and a service that
 * fetches untrusted URLs loses nothing by refusing them. Two reachable rows matter more:
 * NAT64 64:ff9b::/96 and 6to4 2002::/16 (N/A in the registry) carry an IPv4 address inside,
 * which a translator or relay on the way may turn into a private one, so they are refused
 * whatever they carry. So are documentation and benchmarking blocks, which no real site uses.
 */
const SPECIAL_V4: readonly Range[] = [
  ['0.0.0.0/8', '"This network", RFC 791'],
  ['0.0.0.0/32', '"This host on this network", RFC 1122'],
  ['10.0.0.0/8', 'Private-Use, RFC 1918'],
  ['100.64.0.0/10', 'Shared Address Space (carrier-grade NAT), RFC 6598; 100.100.100.200 is a cloud metadata address'],
  ['127.0.0.0/8', 'Loopback, RFC 1122'],
  ['169.254.0.0/16', 'Link Local, RFC 3927; 169.254.169.254 is the cloud metadata address'],
  ['172.16.0.0/12', 'Private-Use, RFC 1918'],
  ['192.0.0.0/24', 'IETF Protocol Assignments, RFC 6890'],
  ['192.0.0.0/29', 'IPv4 Service Continuity Prefix, RFC 7335'],
  ['192.0.0.8/32', 'IPv4 dummy address, RFC 7600'],
  ['192.0.0.9/32', 'Port Control Protocol Anycast, RFC 7723 (globally reachable)'],
  ['192.0.0.10/32', 'Traversal Using Relays around NAT Anycast, RFC 8155 (globally reachable)'],
  ['192.0.0.170/32', 'NAT64/DNS64 Discovery, RFC 8880'],
  ['192.0.0.171/32', 'NAT64/DNS64 Discovery, RFC 8880'],
  ['192.0.2.0/24', 'Documentation (TEST-NET-1), RFC 5737'],
  ['192.31.196.0/24', 'AS112-v4, RFC 7535 (globally reachable)'],
  ['192.52.193.0/24', 'AMT, RFC 7450 (globally reachable)'],
  ['192.88.99.0/24', 'Deprecated (6to4 Relay Anycast), RFC 7526'],
  ['192.88.99.2/32', '6a44-relay anycast address, RFC 6751'],
  ['192.168.0.0/16', 'Private-Use, RFC 1918'],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service, RFC 7534 (globally reachable)'],
  ['198.18.0.0/15', 'Benchmarking, RFC 2544'],
  ['198.51.100.0/24', 'Documentation (TEST-NET-2), RFC 5737'],
  ['203.0.113.0/24', 'Documentation (TEST-NET-3), RFC 5737'],
  ['240.0.0.0/4', 'Reserved, RFC 1112'],
  ['255.255.255.255/32', 'Limited Broadcast, RFC 919'],
]
const SPECIAL_V6: readonly Range[] = [
  ['::1/128', 'Loopback Address, RFC 4291'],
  ['::/128', 'Unspecified Address, RFC 4291'],
  ['::ffff:0:0/96', 'IPv4-mapped Address, RFC 4291: any spelling, ::ffff:7f00:1 as ::ffff:127.0.0.1'],
  ['64:ff9b::/96', 'IPv4-IPv6 Translation (NAT64), RFC 6052 (globally reachable, but carries an IPv4 address)'],
  ['64:ff9b:1::/48', 'IPv4-IPv6 Translation (local use), RFC 8215: carries an IPv4 address'],
  ['100::/64', 'Discard-Only Address Block, RFC 6666'],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix, RFC 9780'],
  ['2001::/23', 'IETF Protocol Assignments, RFC 2928'],
  ['2001::/32', 'TEREDO, RFC 4380: carries an IPv4 address'],
  ['2001:1::1/128', 'Port Control Protocol Anycast, RFC 7723 (globally reachable)'],
  ['2001:1::2/128', 'Traversal Using Relays around NAT Anycast, RFC 8155 (globally reachable)'],
  ['2001:1::3/128', 'DNS-SD Service Registration Protocol Anycast, RFC 9665 (globally reachable)'],
  ['2001:2::/48', 'Benchmarking, RFC 5180'],
  ['2001:3::/32', 'AMT, RFC 7450 (globally reachable)'],
  ['2001:4:112::/48', 'AS112-v6, RFC 7535 (globally reachable)'],
  ['2001:10::/28', 'Deprecated (previously ORCHID), RFC 4843'],
  ['2001:20::/28', 'ORCHIDv2, RFC 7343 (globally reachable)'],
  ['2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix, RFC 9374 (globally reachable)'],
  ['2001:db8::/32', 'Documentation, RFC 3849'],
  ['2002::/16', '6to4, RFC 3056 (reachability N/A): carries an IPv4 address'],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service, RFC 7534 (globally reachable)'],
  ['3fff::/20', 'Documentation, RFC 9637'],
  ['5f00::/16', 'Segment Routing (SRv6) SIDs, RFC 9602'],
  ['fc00::/7', 'Unique-Local, RFC 4193; fd00:ec2::254 is a cloud metadata address'],
  ['fe80::/10', 'Link-Local Unicast, RFC 4291'],
]

/** Refused besides the registries' rows (which leave them out, or have dropped them). */
const MORE_V4: readonly Range[] = [['224.0.0.0/4', 'Multicast, RFC 5771']]
const MORE_V6: readonly Range[] = [
  ['ff00::/8', 'Multicast, RFC 4291'],
  ['fec0::/10', 'Site-local, deprecated by RFC 3879; older networks still number hosts in it'],
  ['::/96', 'IPv4-compatible, deprecated by RFC 4291: ::127.0.0.1 is ::7f00:1'],
  ['::ffff:0:0:0/96', 'IPv4-translated, RFC 2765: carries an IPv4 address'],
  // IANA allocates global unicast from 2000::/3 only (the IPv6 Address Space registry); the
  // rest is reserved, local, multicast or holds an IPv4 address (all of ::/8). Refusing it
  // costs no site and closes special-purpose rows IANA adds there before this table has them.
  ['::/3', 'outside 2000::/3, global unicast'],
  ['4000::/2', 'outside 2000::/3, global unicast'],
  ['8000::/1', 'outside 2000::/3, global unicast'],
]

/**
 * One list per family, checked only with addresses of that family: Node's BlockList matches
 * an IPv4 address against an IPv4-mapped IPv6 rule, so ::ffff:0:0/96 in a shared list would
 * refuse every IPv4 address, and ::/3 would too.
 */
function blockList(ranges: readonly Range[], family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList()
  for (const [block] of ranges) {
    const [network, prefix] = block.split('/')
    list.addSubnet(network!, Number(prefix), family)
  }
  return list
}

const special = { v4: blockList([...SPECIAL_V4, ...MORE_V4], 'ipv4'), v6: blockList([...SPECIAL_V6, ...MORE_V6], 'ipv6') }

/**
 * How long the machine's interface addresses, once read, are taken as they are: reading them
 * costs tens of microseconds, the gate checks every connection of every page, and an
 * interface comes or goes far less often than that.
 */
const OWN_ADDRESSES_MS = 1000

let own: { v4: BlockList; v6: BlockList; readAt: number } | null = null

/**
 * The machine's own addresses, every address of every interface: a host whose interface sits
 * in a public range serves on it what it serves on loopback (an admin port bound to 0.0.0.0).
 * Read again when `fresh` or older than OWN_ADDRESSES_MS (a monotonic clock, so a clock set
 * back does not keep an old read). A read that fails keeps the last one.
 */
function ownAddresses(fresh = false): { v4: BlockList; v6: BlockList } {
  const now = performance.now()
  if (own && !fresh && now - own.readAt < OWN_ADDRESSES_MS) return own
  const v4 = new BlockList()
  const v6 = new BlockList()
  try {
    for (const addresses of Object.values(networkInterfaces())) {
      for (const { address } of addresses ?? []) {
        const bare = address.replace(/%.*$/, '')
        if (isIP(bare) === 4) v4.addAddress(bare, 'ipv4')
        else if (isIP(bare) === 6) v6.addAddress(bare, 'ipv6')
      }
    }
  } catch {
    if (own) return own
  }
  own = { v4, v6, readAt: now }
  return own
}

/** True when an IP address is one the service must not fetch for a caller. */
export function isBlockedAddress(address: string): boolean {
  // A zone (fe80::1%eth0) names a link: whatever the address, it is on one.
  if (address.includes('%')) return true
  const family = isIP(address)
  if (family === 4) return special.v4.check(address, 'ipv4') || ownAddresses().v4.check(address, 'ipv4')
  if (family === 6) return special.v6.check(address, 'ipv6') || ownAddresses().v6.check(address, 'ipv6')
  return true
}

/** The refusal of an IP literal the caller gave: naming it tells them nothing they did not write. */
function literalRefused(literal: string): string {
  return `${literal} is refused by the network policy (an internal or special-purpose address)`
}

/** The refusal of a name: never the address it resolved to, which would tell where an internal name points. */
function nameRefused(name: string): string {
  return `${name} is refused by the network policy`
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
  if (isIP(host) && isBlockedAddress(host)) return literalRefused(host)
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
  if (isIP(host)) return isBlockedAddress(host) ? literalRefused(host) : null
  let addresses: string[]
  try {
    addresses = await resolve(host)
  } catch {
    return `${host} does not resolve`
  }
  if (addresses.length === 0) return `${host} does not resolve`
  return addresses.some(isBlockedAddress) ? nameRefused(host) : null
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
  // The interfaces as they are now, not as a policy made earlier in the process read them.
  ownAddresses(true)
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
      return !open && addresses.some(isBlockedAddress) ? { refused: nameRefused(name) } : { addresses }
    },
  }
}
