/**
 * What a render went without, as the run uses it: the stylesheets it could not read (their
 * links stay blocking) named so that they still match in a later build whose build server
 * has another port, and the hosts it went on without, in the build's words.
 */
import type { JobNetwork } from '../contract/api-contract.ts'

/** Hosts named in one log line; the report has them all. */
const MAX_HOSTS_SHOWN = 3

/** A stylesheet URL as the page names it across builds: a path on the page's own origin, else the whole URL. */
function sheetName(url: string, pageUrl: string): string {
  if (!URL.canParse(url) || !URL.canParse(pageUrl)) return url
  const parsed = new URL(url)
  return parsed.origin === new URL(pageUrl).origin ? `${parsed.pathname}${parsed.search}` : parsed.href
}

/** The notes with every unread stylesheet named relative to the page it was rendered as. */
export function localNotes(network: JobNetwork | null, pageUrl: string): JobNetwork | null {
  if (network === null) return null
  return { skippedHosts: network.skippedHosts, unreadStylesheets: network.unreadStylesheets.map((url) => sheetName(url, pageUrl)) }
}

/** Whether a link's href (as written in the page at `pageUrl`) names a stylesheet the render could not read. */
export function unreadSheet(network: JobNetwork | null, pageUrl: string): (href: string) => boolean {
  const unread = new Set(network?.unreadStylesheets ?? [])
  if (unread.size === 0) return () => false
  return (href) => URL.canParse(href, pageUrl) && unread.has(sheetName(new URL(href, pageUrl).href, pageUrl))
}

/** `went on without a.com (does not resolve), b.com (…)`, or null when it went without nothing. */
export function skippedHostsLine(network: JobNetwork | null): string | null {
  const hosts = network?.skippedHosts ?? []
  if (hosts.length === 0) return null
  const shown = hosts.slice(0, MAX_HOSTS_SHOWN).map(({ host, reason }) => `${host} (${reason})`)
  const more = hosts.length > MAX_HOSTS_SHOWN ? ` and ${hosts.length - MAX_HOSTS_SHOWN} more` : ''
  return `went on without ${shown.join(', ')}${more}`
}
