/**
 * Names to addresses for the egress gate, without the resolver's long retries. The system's
 * lookup (getaddrinfo) waits 5 s before it asks again when a query gets no answer, and holds
 * one of libuv's four pool threads meanwhile: four such names stall every file read of the
 * process (the build server's among them). The hosts file is read first, as the system does;
 * DNS is asked over c-ares, each attempt bounded. (No mDNS: a `.local` name does not resolve.)
 */
import { readFileSync } from 'node:fs'
import { Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'

/** The first DNS attempt: a lost answer costs this, then the query is sent again (c-ares doubles it each time: 1 + 2 + 4 s in all). */
const ATTEMPT_MS = 1000
const ATTEMPTS = 3
/** What c-ares says when no answer came within its attempts. */
const NO_ANSWER = new Set(['ETIMEOUT', 'ECONNREFUSED', 'ESERVFAIL'])
const HOSTS_FILE = '/etc/hosts'
const LOOPBACK = ['127.0.0.1', '::1']

let hostsFile: Map<string, string[]> | null = null

/** The hosts file's names → addresses, read once; names every system resolves to loopback included. */
function fromHostsFile(host: string): string[] {
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
  const name = host.toLowerCase().replace(/\.$/, '')
  return hostsFile.get(name) ?? (name.endsWith('.localhost') ? LOOPBACK : [])
}

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
  const listed = fromHostsFile(host)
  if (listed.length > 0) return listed
  const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)])
  const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []))
  if (addresses.length > 0) return addresses
  const silent = answers.find((answer) => answer.status === 'rejected' && NO_ANSWER.has((answer.reason as NodeJS.ErrnoException).code ?? ''))
  if (silent?.status === 'rejected') throw silent.reason
  throw (answers[0] as PromiseRejectedResult).reason
}
