/**
 * What one load of a page does on the network, as the browser reports it: the requests still
 * in flight, the stylesheets it received (their bodies are read later, once per job) or could
 * not get, the hosts its main frame navigated to, and how its latest navigation ended.
 */
import type { Frame, Page, Request, Response } from 'playwright-core'
import { authorityOf } from './egress.ts'

/** The kinds of another host's requests that hold a page: what shapes its first screen or holds its parser. */
const HOLDING_TYPES = new Set(['stylesheet', 'script', 'font', 'fetch', 'xhr'])

export class PageNetwork {
  /** The page's requests not yet finished or failed: when each was sent (epoch ms), and its `host:port` (null: no network URL). */
  readonly inFlight = new Map<Request, { sent: number; authority: string | null }>()
  /** The main frame's stylesheet responses by every URL of their redirect chain: another frame's sheets style no part of the page read. */
  readonly responses = new Map<string, Response>()
  /** Stylesheets whose request failed (a cut host, a refused or unreachable one, a reset) or got an error answer (404), by every URL of their chain. */
  readonly failedSheets = new Set<string>()
  /** The `host:port`s the main frame's navigations went to, in order: a refusal of one of them is the page's. */
  readonly navigations: string[] = []
  /** The main frame's navigation requests not yet answered: while there is one, the page is on its way elsewhere (the document it loads commits as its answer comes). */
  readonly pendingNavigations = new Set<Request>()
  /** Every `host:port` the page sent a request to: the browser's own background requests go through the same gate, and are not the page's. */
  readonly authorities = new Set<string>()
  /** How the main frame's latest navigation ended: null while it loaded fine, else what went wrong. */
  failure: string | null = null

  constructor(page: Page) {
    page.on('request', (request) => {
      // Read once here: the waits look at every request in flight every few ms.
      const authority = authorityOf(request.url())
      this.inFlight.set(request, { sent: Date.now(), authority })
      const navigation = request.isNavigationRequest() && request.frame() === page.mainFrame()
      if (navigation) this.pendingNavigations.add(request)
      if (authority === null) return
      this.authorities.add(authority)
      if (navigation && !this.navigations.includes(authority)) this.navigations.push(authority)
    })
    page.on('requestfinished', (request) => {
      this.inFlight.delete(request)
      this.pendingNavigations.delete(request)
    })
    page.on('requestfailed', (request) => {
      this.inFlight.delete(request)
      this.pendingNavigations.delete(request)
      if (request.resourceType() === 'stylesheet') for (const hop of chainOf(request)) this.failedSheets.add(hop)
      const error = request.failure()?.errorText ?? 'failed'
      // An aborted navigation (another one overtook it, a download) leaves the page where it was.
      if (request.isNavigationRequest() && request.frame() === page.mainFrame() && error !== 'net::ERR_ABORTED') this.failure = `a page that could not be loaded (${error})`
    })
    page.on('response', (response) => {
      const request = response.request()
      this.pendingNavigations.delete(request)
      if (request.resourceType() === 'stylesheet' && frameOf(request) === page.mainFrame()) {
        // An error answer (a 404 of a wrong base) is unread as a failed request is. Chromium aborts such a load today
        // (requestfailed follows), but the answer is what says so, not the browser's way of dropping it.
        if (response.ok()) for (const hop of chainOf(request)) this.responses.set(hop, response)
        else if (response.status() >= 400) for (const hop of chainOf(request)) this.failedSheets.add(hop)
      }
      if (!request.isNavigationRequest() || response.frame() !== page.mainFrame() || (response.status() >= 300 && response.status() < 400)) return
      this.failure = response.ok() ? null : `a page that answered HTTP ${response.status()}`
    })
  }

  /** The requests in flight, each with whether it is the page's own: its `host:port` is the one the page is on now (or it has none). */
  inFlightBy(page: Page): { request: Request; own: boolean; sent: number; authority: string | null }[] {
    const pageAuthority = authorityOf(page.url())
    return [...this.inFlight].map(([request, { sent, authority }]) => ({ request, own: authority === null || authority === pageAuthority, sent, authority }))
  }

  /** Whether a request of the page's own is in flight. */
  ownInFlight(page: Page): boolean {
    return this.inFlightBy(page).some((entry) => entry.own)
  }

  /**
   * Other hosts whose requests in flight hold the page (its scripts, stylesheets, fonts,
   * fetches), by `host:port`, each with when its oldest such request was sent.
   */
  holdingHosts(page: Page): Map<string, number> {
    const hosts = new Map<string, number>()
    for (const { request, own, sent, authority } of this.inFlightBy(page)) {
      if (own || !HOLDING_TYPES.has(request.resourceType())) continue
      hosts.set(authority!, Math.min(sent, hosts.get(authority!) ?? sent))
    }
    return hosts
  }
}

/** Every URL a request went through: the first one asked for, each redirect, the last. */
function chainOf(request: Request): string[] {
  const urls: string[] = []
  for (let hop: Request | null = request; hop; hop = hop.redirectedFrom()) urls.push(hop.url())
  return urls
}

/** The frame a request is for; null for a worker's (Playwright throws for those). */
function frameOf(request: Request): Frame | null {
  try {
    return request.frame()
  } catch {
    return null
  }
}
