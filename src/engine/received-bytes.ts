/**
 * What a page's loads receive, decoded, counted as it arrives: a page whose stylesheets or
 * a document of which pass their bound is stopped while the bytes are still coming, before
 * any of them is read into this process. A compressed body says nothing of its size until
 * it is decoded (100 MiB of CSS is 100 KB gzipped), and the browser tells decoded sizes
 * only to a DevTools session of our own: Playwright's drops them.
 */
import type { CDPSession } from 'playwright-core'
import { EngineError } from './engine.ts'
import { MAX_DOCUMENT_BYTES, MAX_PAGE_CSS_BYTES, mebibytes } from './limits.ts'

/** Sessions whose Network domain is on: once per page, its jobs come and go. */
const listening = new WeakSet<CDPSession>()

type Counted = 'Stylesheet' | 'Document'

export class ReceivedBytes {
  /** Requests counted, by the browser's request id: what kind each is. */
  readonly #kinds = new Map<string, Counted>()
  /** The latest stylesheet response for each URL, by request id: its body can be asked for on this session. */
  readonly #sheets = new Map<string, string>()
  readonly #documents = new Map<string, number>()
  #stylesheets = 0
  #over = false
  readonly #session: CDPSession
  readonly #onResponse: (event: { requestId: string; type: string; response: { url: string } }) => void
  readonly #onData: (event: { requestId: string; dataLength: number }) => void

  /** Counts what `session`'s page receives from now on; `over` hears once of the first bound passed. */
  private constructor(session: CDPSession, over: (error: EngineError) => void) {
    this.#session = session
    this.#onResponse = ({ requestId, type, response }) => {
      if (type === 'Stylesheet' || type === 'Document') this.#kinds.set(requestId, type)
      if (type === 'Stylesheet') this.#sheets.set(response.url, requestId)
    }
    this.#onData = ({ requestId, dataLength }) => {
      const kind = this.#kinds.get(requestId)
      if (kind === undefined || this.#over) return
      const error = kind === 'Stylesheet' ? this.#addStylesheet(dataLength) : this.#addDocument(requestId, dataLength)
      if (error === null) return
      this.#over = true
      over(error)
    }
    session.on('Network.responseReceived', this.#onResponse)
    session.on('Network.dataReceived', this.#onData)
  }

  static async watch(session: CDPSession, over: (error: EngineError) => void): Promise<ReceivedBytes> {
    if (!listening.has(session)) {
      // No buffer of its own: a body asked for here comes from the renderer's copy of the resource, not a second one kept for it.
      await session.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 })
      listening.add(session)
    }
    return new ReceivedBytes(session, over)
  }

  /**
   * A stylesheet's body as the browser received it, asked on this session: half what a
   * Playwright response's body costs (no copy through its protocol). Undefined when this
   * session saw no response for `url`, or the browser no longer has it.
   */
  async stylesheetText(url: string): Promise<string | undefined> {
    const requestId = this.#sheets.get(url)
    if (requestId === undefined) return undefined
    try {
      const { body, base64Encoded } = await this.#session.send('Network.getResponseBody', { requestId })
      return base64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body
    } catch {
      return undefined
    }
  }

  stop(): void {
    this.#session.off('Network.responseReceived', this.#onResponse)
    this.#session.off('Network.dataReceived', this.#onData)
  }

  #addStylesheet(bytes: number): EngineError | null {
    this.#stylesheets += bytes
    return this.#stylesheets > MAX_PAGE_CSS_BYTES ? cssOverBound(this.#stylesheets) : null
  }

  #addDocument(requestId: string, bytes: number): EngineError | null {
    const total = (this.#documents.get(requestId) ?? 0) + bytes
    this.#documents.set(requestId, total)
    if (total <= MAX_DOCUMENT_BYTES) return null
    return new EngineError('render_failed', `A document of the page is larger than the ${mebibytes(MAX_DOCUMENT_BYTES)} the engine loads (decoded); it was stopped while it loaded.`)
  }
}

/** The failure of a page whose CSS passed the bound, however it was found out. */
export function cssOverBound(bytes: number): EngineError {
  return new EngineError('render_failed', `The page's stylesheets hold more than ${mebibytes(MAX_PAGE_CSS_BYTES)} of CSS (${mebibytes(bytes)} so far, decoded), the most the engine reads; it was stopped there.`)
}
