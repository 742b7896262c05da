/**
 * Names to addresses for the egress gate, without the resolver's long retries. The system's
 * lookup (getaddrinfo) waits 5 s before it asks again when a query gets no answer, and holds
 * one of libuv's four pool threads meanwhile: four such names stall every file read of the
 * process (the build server's among them). The hosts file is read first, as the system does;
 * DNS is asked over c-ares, each attempt bounded, and a query with no answer yet after a
 * moment is sent once more from a socket of its own: a lost answer costs that moment, not
 * the attempt's second. Answers are kept for their TTL (a name that does not exist, or gets
 * no answer, for a short while), and a name asked for again while its lookup runs shares it:
 * pages of one site ask for the same few hosts, and each lost answer would cost each page
 * again. (No mDNS: a `.local` name does not resolve.)
 */
import { readFileSync } from 'node:fs'
import { Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'
import { settlesWithin } from '../shared/abortable.ts'

/** The first DNS attempt: a lost answer costs this, then the query is sent again (c-ares doubles it each time: 1 + 2 + 4 s in all). */
const ATTEMPT_MS = 1000
const ATTEMPTS = 3
/** How long a query waits for its answer before it is sent again alongside: well past a loopback or LAN resolver's answer, well short of the attempt. */
const HEDGE_MS = 250
/** Longest an answer is kept, whatever its TTL says. */
const MAX_TTL_S = 300
/** How long a name that does not exist, or got no answer, is taken as such. */
const FAILED_TTL_S = 30
/** Names kept at most (the least recently asked goes first): a page may ask for any number of names. */
const NAMES_KEPT = 1024
/** What c-ares says when no answer came within its attempts. */
const NO_ANSWER = new Set(['ETIMEOUT', 'ECONNREFUSED', 'ESERVFAIL'])
const HOSTS_FILE = '/etc/hosts'
const LOOPBACK = ['127.0.0.1', '::1']

let hostsFile: Map<string, string[]> | null = null

/** The hosts file's names → addresses, read once; names every system resolves to loopback included. */
function fromHostsFile(name: string): string[] {
  if (hostsFile === null) {
    hostsFile = new Map([['localhost', LOOPBACK]])
    let text = ''
    try {
      text = readFileSync(HOSTS_FILE, 'utf8')
    } catch {
      // No hosts file: DNS alone.
    }
    for (const line of text.split('\n')) {
      const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/)
      if (!address || isIP(address) === 0) continue
      for (const name of names) hostsFile.set(name.toLowerCase(), [...new Set([...(hostsFile.get(name.toLowerCase()) ?? []), address])])
    }
  }
  return hostsFile.get(name) ?? (name.endsWith('.localhost') ? LOOPBACK : [])
}

/** A lookup's outcome, and how long it holds (seconds). */
interface Lookup {
  addresses: string[]
  error: unknown
  ttl: number
}

/**
 * A resolver: every address of a host; rejects when it has none, or when DNS gave no answer
 * within its attempts. `servers`: DNS servers to ask instead of the system's (`127.0.0.1:5353`).
 */
export function hostResolver(options: { servers?: string[] } = {}): (host: string) => Promise<string[]> {
  let resolvers: Resolvers | null = null
  const known = new Map<string, { until: number; lookup: Promise<Lookup> }>()
  return async (host) => {
    const name = host.toLowerCase().replace(/\.$/, '')
    const listed = fromHostsFile(name)
    if (listed.length > 0) return listed
    let entry = known.get(name)
    known.delete(name)
    if (entry === undefined || entry.until <= Date.now()) {
      resolvers ??= twoResolvers(options.servers)
      // Kept while it runs (a second page asking shares it), then for as long as its answer holds.
      const lookup = lookUp(resolvers, name)
      const fresh = { until: Infinity, lookup }
      void lookup.then(({ ttl }) => (fresh.until = Date.now() + ttl * 1000))
      entry = fresh
    }
    known.set(name, entry)
    if (known.size > NAMES_KEPT) known.delete(known.keys().next().value as string)
    const { addresses, error } = await entry.lookup
    if (addresses.length === 0) throw error
    return addresses
  }
}

/** The system's DNS servers, with bounded attempts. */
export const resolveHost = hostResolver()

type Resolvers = [Resolver, Resolver]

/** Two channels: a query sent again goes out from a socket of its own, so the first one's late answer is not dropped. */
function twoResolvers(servers: string[] | undefined): Resolvers {
  const make = (): Resolver => {
    const resolver = new Resolver({ timeout: ATTEMPT_MS, tries: ATTEMPTS })
    if (servers) resolver.setServers(servers)
    return resolver
  }
  return [make(), make()]
}

/**
 * A query on the first channel, and, when it has no answer after {@link HEDGE_MS}, the same
 * query on the second: the first answer counts, "no such name" included; only when neither
 * got an answer does it fail as the first did.
 */
async function hedged<T>(resolvers: Resolvers, ask: (resolver: Resolver) => Promise<T>): Promise<T> {
  const first = ask(resolvers[0])
  if (await settlesWithin(first, HEDGE_MS)) return await first
  const second = ask(resolvers[1])
  return await new Promise<T>((resolve, reject) => {
    let silent = 0
    for (const query of [first, second]) {
      query.then(resolve, (error: unknown) => {
        if (!isNoAnswer(error)) reject(error)
        else if (++silent === 2) first.catch(reject)
      })
    }
  })
}

/** The server gave no answer within the attempts (an answer that the name does not exist is one). */
function isNoAnswer(error: unknown): boolean {
  return NO_ANSWER.has((error as NodeJS.ErrnoException | null)?.code ?? '')
}

async function lookUp(resolvers: Resolvers, host: string): Promise<Lookup> {
  const answers = await Promise.allSettled([hedged(resolvers, (resolver) => resolver.resolve4(host, { ttl: true })), hedged(resolvers, (resolver) => resolver.resolve6(host, { ttl: true }))])
  const records = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []))
  if (records.length > 0) return { addresses: records.map((record) => record.address), error: null, ttl: Math.min(MAX_TTL_S, ...records.map((record) => record.ttl)) }
  const silent = answers.find((answer) => answer.status === 'rejected' && isNoAnswer(answer.reason))
  return { addresses: [], error: silent?.status === 'rejected' ? silent.reason : (answers[0] as PromiseRejectedResult).reason, ttl: FAILED_TTL_S }
}
