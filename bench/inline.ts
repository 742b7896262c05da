/**
 * Inliner throughput in MB/s of HTML, on a small (5 KB), a typical (60 KB) and a large
 * (2 MB) page, beside `inline-critical` (the inliner `critical` uses) and beasties'
 * `process()` given the same page and CSS, all in one run. Also: htmlparser2's tokenizer
 * alone, as the floor of what reading the page costs, and whether the bytes outside the
 * edits survive.
 *
 *   npm run bench:inline
 */
import { Tokenizer } from 'htmlparser2'
import BeastiesExport from 'beasties'
import { inline as inlineCritical } from 'inline-critical'
import { inlineCriticalCss } from '../src/html/inline.ts'
import { applyEdits } from '../test/fixtures/edits.ts'
import { CSS, STYLESHEET, UNUSED_CSS, page } from './pages.ts'

const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 3000)

interface Measured {
  mbPerSecond: number | null
  note: string
}

/** Median of three timed rounds: this machine is shared, and single rounds vary by ±15 %. */
async function measure(run: () => unknown, bytes: number): Promise<Measured> {
  try {
    await run()
    await run()
  } catch (error) {
    const e = error as Error
    return { mbPerSecond: null, note: `throws ${e.name}: ${e.message.split('\n')[0]?.slice(0, 60)}` }
  }
  const rounds: number[] = []
  for (let round = 0; round < 3; round++) {
    let iterations = 0
    const started = performance.now()
    while (performance.now() - started < BUDGET_MS / 3 || iterations < 3) {
      await run()
      iterations++
    }
    rounds.push((bytes * iterations) / 1e6 / ((performance.now() - started) / 1000))
  }
  rounds.sort((a, b) => a - b)
  return { mbPerSecond: rounds[1]!, note: '' }
}

/** The body as written: kept byte for byte by an inliner that only edits what it must. */
function bodyKept(input: string, output: string): boolean {
  const body = input.slice(input.indexOf('<main>'), input.indexOf('</main>'))
  return output.includes(body)
}

// beasties' types describe a CommonJS default export; under ESM the import is the class itself.
const Beasties = ((BeastiesExport as unknown as { default?: unknown }).default ?? BeastiesExport) as unknown as typeof import('beasties').default

/** Reads the stylesheet from memory: the comparison is of the work, not of the disk. */
const noop = (): void => {}
const NO_CALLBACKS: ConstructorParameters<typeof Tokenizer>[1] = {
  onattribdata: noop,
  onattribentity: noop,
  onattribend: noop,
  onattribname: noop,
  oncdata: noop,
  onclosetag: noop,
  oncomment: noop,
  ondeclaration: noop,
  onend: noop,
  onopentagend: noop,
  onopentagname: noop,
  onprocessinginstruction: noop,
  onselfclosingtag: noop,
  ontext: noop,
  ontextentity: noop,
}

class MemoryBeasties extends Beasties {
  override readFile(): string {
    return STYLESHEET
  }
}
const beasties = new MemoryBeasties({ path: '/', preload: 'body', logLevel: 'silent' })

const rows = []
for (const [label, size] of [
  ['small (5 KB)', 5_000],
  ['typical (60 KB)', 60_000],
  ['large (2 MB)', 2_000_000],
] as const) {
  const html = page(size)
  const bytes = Buffer.byteLength(html)

  const tokenizerOnly = await measure(() => {
    const tokenizer = new Tokenizer({ decodeEntities: false }, NO_CALLBACKS)
    tokenizer.write(html)
    tokenizer.end()
  }, bytes)

  const ours = await measure(() => inlineCriticalCss(html, CSS), bytes)
  const oursMedia = await measure(() => inlineCriticalCss(html, CSS, { preload: 'media' }), bytes)
  const ourOutput = inlineCriticalCss(html, CSS)
  const oursExact = applyEdits(html, ourOutput.edits) === ourOutput.html

  const inlineCriticalResult = await measure(() => inlineCritical(html, CSS), bytes)
  let inlineCriticalKept = 'n/a'
  try {
    inlineCriticalKept = bodyKept(html, inlineCritical(html, CSS)) ? 'yes' : 'no'
  } catch {
    // Reported in the note.
  }

  const beastiesResult = await measure(() => beasties.process(html), bytes)
  const beastiesKept = bodyKept(html, await beasties.process(html)) ? 'yes' : 'no'

  const ratio = (other: Measured): string => (other.mbPerSecond && ours.mbPerSecond ? `${(ours.mbPerSecond / other.mbPerSecond).toFixed(0)}×` : '—')
  const fmt = (m: Measured): string => (m.mbPerSecond === null ? m.note : m.mbPerSecond.toFixed(1))
  rows.push({
    page: `${label}, ${(bytes / 1024).toFixed(0)} KiB`,
    'htmlparser2 tokenizer MB/s': fmt(tokenizerOnly),
    'ours (body) MB/s': fmt(ours),
    'ours (media) MB/s': fmt(oursMedia),
    'ours: bytes outside edits kept': oursExact ? 'yes' : 'NO',
    'inline-critical MB/s': fmt(inlineCriticalResult),
    'inline-critical: body kept': inlineCriticalKept,
    'beasties MB/s': fmt(beastiesResult),
    'beasties: body kept': beastiesKept,
    'ours vs beasties': ratio(beastiesResult),
  })
}

console.log(`\ninlineCriticalCss throughput, ${(Buffer.byteLength(CSS) / 1024).toFixed(1)} KiB of critical CSS (beasties gets it plus ${(Buffer.byteLength(UNUSED_CSS) / 1024).toFixed(1)} KiB unused to prune); node ${process.version}`)
console.table(rows)
console.log('Targets on the typical page: ≥ 50 MB/s, ≥ 50× beasties, bytes outside the edits kept.')
console.log("'body' reads the whole page (its stylesheets move to the end of the body); the other strategies read the body as far as its last <link (where it begins, on a page with none).")
