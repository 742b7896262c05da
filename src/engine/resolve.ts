/**
 * Names to addresses for the egress gate, without the resolver's long retries. The system's
 * lookup (getaddrinfo) waits 5 s before it asks again when a query gets no answer, and holds
 * one of libuv's four pool threads meanwhile: four such names stall every file read of the
 * process (the build server's among them). DNS is asked here over c-ares, each attempt
 * bounded; a name DNS does not know goes to the system's lookup, which also reads /etc/hosts.
 */
import { lookup, Resolver } from 'node:dns/promises'

/** The first DNS attempt: a lost answer costs this, then the query is sent again (c-ares doubles it each time: 1 + 2 + 4 s in all). */
const ATTEMPT_MS = 1000
const ATTEMPTS = 3
/** What c-ares says when no answer came within its attempts. */
const NO_ANSWER = new Set(['ETIMEOUT', 'ECONNREFUSED', 'ESERVFAIL'])

/**
 * A resolver: every address of a host; rejects when it has none, or when DNS gave no answer
 * within its attempts. `servers`: DNS servers to ask instead of the system's (`127.0.0.1:5353`).
 */
export function hostResolver(options: { servers?: string[] } = {}): (host: string) => Promise<string[]> {
  let resolver: Resolver | null = null
  return async (host) => {
    if (resolver === null) {
      resolver = new Resolver({ timeout: ATTEMPT_MS, tries: ATTEMPTS })
      if (options.servers) resolver.setServers(options.servers)
    }
    return await resolved(resolver, host)
  }
}

/** The system's DNS servers, with bounded attempts. */
export const resolveHost = hostResolver()

async function resolved(resolver: Resolver, host: string): Promise<string[]> {
  const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)])
  const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []))
  if (addresses.length > 0) return addresses
  const silent = answers.find((answer) => answer.status === 'rejected' && NO_ANSWER.has((answer.reason as NodeJS.ErrnoException).code ?? ''))
  if (silent?.status === 'rejected') throw silent.reason
  // Not a name DNS knows: /etc/hosts and the system's other sources may (localhost, a dev name).
  return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
}
