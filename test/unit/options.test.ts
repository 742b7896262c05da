import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../src/core/errors.ts'
import { assertRunnable, enabledFor, resolveDirectoryOptions, resolveOptions, type FrameworkSite, type Options } from '../../src/core/options.ts'

const TOKEN = 'tok_options_abcdef0123456789'

function rejection(options: unknown, env: Record<string, string> = {}): string {
  try {
    resolveOptions(options as Options, env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError)
    return (error as Error).message
  }
  throw new Error('expected resolveOptions to throw')
}

describe('resolveOptions', () => {
  it('fills every default', () => {
    const resolved = resolveOptions({}, {})
    expect(resolved).toMatchObject({
      pages: null,
      service: null,
      siteUrl: null,
      viewports: [{ width: 1300, height: 900 }, { width: 412, height: 915 }],
      preload: 'loader',
      nonce: null,
      concurrency: null,
      timeoutMs: 120_000,
      strict: false,
      cache: { dir: null, ttlMs: 86_400_000 },
      report: null,
      rateLimit: null,
      enabled: null,
      problems: [],
    })
  })

  it('takes a server route’s samples as one path or several, each once, and names what is not a path', () => {
    const resolved = resolveOptions({ samples: { '/blog/[slug]': '/blog/a', '/docs/[...path]': ['/docs/a', '/docs/b/c', '/docs/a'] } }, {})
    expect(resolved.samples).toEqual(new Map([['/blog/[slug]', ['/blog/a']], ['/docs/[...path]', ['/docs/a', '/docs/b/c']]]))
    expect(resolveOptions({}, {}).samples).toEqual(new Map())
    expect(() => resolveOptions({ samples: { '/blog/[slug]': 'https://site.example/blog/a' } }, {})).toThrow(/samples.*must be a URL path starting with \/ \(no origin\)/)
    expect(() => resolveOptions({ samples: { '/blog/[slug]': [] } }, {})).toThrow(/samples.*must list at least one path/)
    expect(() => resolveOptions({ samples: { 'blog/[slug]': '/blog/a' } }, {})).toThrow(/option `samples`: each route must start with \/, as the framework names it/)
  })

  it('takes service, token and site from the env, options first', () => {
    const env = { CRITICAL_CSS_BASE_URL: 'https://env.example', CRITICAL_CSS_API_TOKEN: TOKEN, CRITICAL_CSS_SITE_URL: 'https://site.example' }
    const fromEnv = resolveOptions({}, env)
    expect(fromEnv.service?.baseUrl).toBe('https://env.example')
    expect(fromEnv.service?.token.reveal()).toBe(TOKEN)
    expect(fromEnv.siteUrl?.href).toBe('https://site.example/')
    expect(resolveOptions({ baseUrl: 'https://option.example' }, env).service?.baseUrl).toBe('https://option.example')
    // A site deployed below a path is a directory: relative pages resolve inside it.
    expect(resolveOptions({ siteUrl: 'https://site.example/app?x#y' }, {}).siteUrl?.href).toBe('https://site.example/app/')
  })

  it.each([
    [{ preload: 'lazy' }, 'option `preload`'],
    [{ pages: ['/', 3] }, 'option `pages[1]`'],
    [{ pages: [{ url: '/', file: 'x' }] }, 'unknown option `file`'],
    [{ viewports: [{ width: 10, height: 900 }] }, 'option `viewports[0].width`'],
    [{ timeout: -1 }, 'option `timeout`'],
    [{ cache: true }, 'option `cache`'],
    [{ baseUrl: 'ftp://x' }, 'option `baseUrl`: must be an absolute http(s) URL'],
    [{ concurrency: 0 }, 'option `concurrency`'],
    [{ pagse: [] }, 'unknown option `pagse`'],
  ])('%j fails naming %s', (options, named) => {
    expect(rejection(options)).toContain(named)
  })

  it('takes the engine from the option, then env CRITICAL_CSS_ENGINE, else auto; names the three when it is none of them', () => {
    expect(resolveOptions({}, {}).engine).toBe('auto')
    expect(resolveOptions({}, { CRITICAL_CSS_ENGINE: 'static' }).engine).toBe('static')
    expect(resolveOptions({ engine: 'chromium' }, { CRITICAL_CSS_ENGINE: 'static' }).engine).toBe('chromium')
    expect(rejection({ engine: 'playwright' })).toContain("option `engine`: must be one of 'auto', 'chromium', 'static'")
    expect(() => assertRunnable(resolveOptions({}, { CRITICAL_CSS_ENGINE: 'firefox' }))).toThrow('env CRITICAL_CSS_ENGINE must be one of auto, chromium, static')
    // A configured service renders with its own engine: a choice here would be ignored, so it is refused.
    const remote = resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN, engine: 'static' }, {})
    expect(() => assertRunnable(remote)).toThrow(/`engine` is 'static', .* renders with its own engine/)
    expect(resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN, engine: 'auto' }, {}).problems).toEqual([])
  })

  it('says which option an unknown one likely meant, where it is, and nothing when none is close', () => {
    expect(rejection({ strcit: true })).toBe('unplugin-critical-css: there is an unknown option `strcit` (did you mean `strict`?).')
    // A flag's spelling in a config, and keys inside an option.
    expect(rejection({ 'site-url': 'https://site.example' })).toContain('unknown option `site-url` (did you mean `siteUrl`?)')
    expect(rejection({ cache: { dri: '.cache' } })).toContain('`cache` has an unknown option `dri` (did you mean `dir`?)')
    expect(rejection({ viewports: [{ width: 1300, hieght: 900 }] })).toContain('`viewports[0]` has an unknown option `hieght` (did you mean `height`?)')
    expect(rejection({ frobnicate: 1, preloads: 'body' })).toContain('there is an unknown option `frobnicate`, `preloads` (did you mean `preload`?)')
    // `base` is an option of a folder only.
    expect(() => resolveDirectoryOptions({ bsae: '/docs/' } as never, { env: {} })).toThrow('unknown option `bsae` (did you mean `base`?)')
  })

  it('names the env var at fault when a build runs, not when the plugin is created', () => {
    const resolved = resolveOptions({}, { CRITICAL_CSS_BASE_URL: 'not a url', CRITICAL_CSS_API_TOKEN: 'short' })
    expect(() => assertRunnable(resolved)).toThrow(/env CRITICAL_CSS_BASE_URL must be an absolute http\(s\) URL; env CRITICAL_CSS_API_TOKEN/)
    // An option overrides a malformed env var.
    expect(resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN }, { CRITICAL_CSS_BASE_URL: 'not a url' }).problems).toEqual([])
  })

  it('never echoes a malformed token', () => {
    const bad = 'tok with spaces that is long enough'
    expect(rejection({ token: bad })).not.toContain(bad)
    expect(() => assertRunnable(resolveOptions({ baseUrl: 'https://svc.example' }, { CRITICAL_CSS_API_TOKEN: bad }))).toThrow(/CRITICAL_CSS_API_TOKEN/)
    expect(() => assertRunnable(resolveOptions({ baseUrl: 'https://svc.example' }, { CRITICAL_CSS_API_TOKEN: bad }))).not.toThrow(bad)
  })

  it('keeps the token out of inspect, JSON and String', () => {
    const resolved = resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN }, {})
    expect(inspect(resolved, { depth: 5 })).not.toContain(TOKEN)
    expect(JSON.stringify(resolved)).not.toContain(TOKEN)
    expect(`${resolved.service?.token}`).not.toContain(TOKEN)
  })
})

describe('assertRunnable', () => {
  it('accepts no service at all (embedded mode), relative pages included', () => {
    expect(() => assertRunnable(resolveOptions({}, {}))).not.toThrow()
    expect(() => assertRunnable(resolveOptions({ pages: ['/', 'about/'] }, {}))).not.toThrow()
  })

  it('names what is missing', () => {
    expect(() => assertRunnable(resolveOptions({ baseUrl: 'https://u:p@svc.example' }, {}))).toThrow(/CRITICAL_CSS_API_TOKEN/)
    expect(() => assertRunnable(resolveOptions({ baseUrl: 'https://u:p@svc.example' }, {}))).not.toThrow(/u:p/)
    expect(() => assertRunnable(resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN, pages: ['/'] }, {}))).toThrow(/CRITICAL_CSS_SITE_URL/)
    expect(() => assertRunnable(resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN, pages: ['https://a.example/'] }, {}))).not.toThrow()
  })
})

describe('enabledFor', () => {
  const production = { production: true, watch: false, pageless: false }

  it('runs in production client builds only, unless `enabled` says otherwise', () => {
    const auto = resolveOptions({}, {})
    expect(enabledFor(auto, production)).toBe(true)
    expect(enabledFor(auto, { ...production, production: false })).toBe(false)
    expect(enabledFor(auto, { ...production, watch: true })).toBe(false)
    expect(enabledFor(auto, { ...production, pageless: true })).toBe(false)
    expect(enabledFor(resolveOptions({ enabled: true }, {}), { production: false, watch: true, pageless: true })).toBe(true)
    expect(enabledFor(resolveOptions({ enabled: false }, {}), production)).toBe(false)
  })

  it('fails a build that runs with a broken configuration, and only such a build', () => {
    const broken = resolveOptions({ baseUrl: 'https://svc.example' }, {})
    expect(() => enabledFor(broken, { ...production, production: false })).not.toThrow()
    expect(() => enabledFor(broken, production)).toThrow(/no API token for https:\/\/svc\.example/)
  })
})

describe('resolveDirectoryOptions: what a framework says enters here', () => {
  const framework = (site: Partial<FrameworkSite>): FrameworkSite => ({ name: 'Astro', ...site })

  it('normalises a framework base path however the framework spells it', () => {
    for (const [raw, base] of [
      ['', '/'],
      ['/', '/'],
      ['docs', '/docs/'],
      ['/docs', '/docs/'],
      ['/docs/', '/docs/'],
      ['//docs//guide', '/docs/guide/'],
    ] as const) {
      expect(resolveDirectoryOptions({}, { env: {}, framework: framework({ base: raw }) }).base, raw).toBe(base)
    }
    expect(resolveDirectoryOptions({}, { env: {}, framework: framework({}) }).base).toBe('/')
  })

  it('the base option wins over the framework base', () => {
    expect(resolveDirectoryOptions({ base: '/mine/' }, { env: {}, framework: framework({ base: '/theirs' }) }).base).toBe('/mine/')
  })

  it("the framework's site URL comes after the siteUrl option and the env var", () => {
    const site = framework({ siteUrl: 'https://framework.example/app' })
    expect(resolveDirectoryOptions({}, { env: {}, framework: site }).options.siteUrl?.href).toBe('https://framework.example/app/')
    expect(resolveDirectoryOptions({}, { env: { CRITICAL_CSS_SITE_URL: 'https://env.example' }, framework: site }).options.siteUrl?.href).toBe('https://env.example/')
    expect(resolveDirectoryOptions({ siteUrl: 'https://option.example' }, { env: {}, framework: site }).options.siteUrl?.href).toBe('https://option.example/')
  })

  it("a framework's site URL that is not http(s) is named as the framework's", () => {
    expect(() => resolveDirectoryOptions({}, { env: {}, framework: framework({ siteUrl: 'ftp://files.example' }) })).toThrow(/Astro's site URL "ftp:\/\/files\.example" is not an absolute http\(s\) URL/)
  })
})

describe('keep, drop, states, keepFontFaces, keepKeyframes: the user’s say over the critical set (issue 49)', () => {
  it('are all at their defaults unless given, and then make one selection with only what differs', () => {
    expect(resolveOptions({}, {}).selection).toBeNull()
    expect(resolveOptions({ keep: [], drop: [], states: [], keepFontFaces: true, keepKeyframes: true }, {}).selection).toBeNull()
    expect(resolveOptions({ keep: ['.menu.is-open'], drop: ['.cookie-banner'], states: ['[data-theme=dark]', '.dark'], keepFontFaces: false, keepKeyframes: false }, {}).selection).toEqual({
      keep: ['.menu.is-open'],
      drop: ['.cookie-banner'],
      states: ['[data-theme=dark]', '.dark'],
      fontFaces: false,
      keyframes: false,
    })
  })

  it('keep and drop take RegExps beside strings, held apart to be matched against a build’s stylesheets', () => {
    const menu = /^\.menu/
    const resolved = resolveOptions({ keep: ['.open', menu], drop: [/ad-/] }, {})
    expect(resolved.selection).toEqual({ keep: ['.open'] })
    expect(resolved.selectionPatterns).toEqual({ keep: [menu], drop: [/ad-/] })
    expect(resolveOptions({ keep: ['.open'] }, {}).selectionPatterns).toBeNull()
  })

  it('refuse an entry that is neither a selector string nor a RegExp, naming the option and the entry', () => {
    expect(rejection({ keep: ['.ok', 42] })).toContain('option `keep[1]`: must be a selector string or a RegExp')
    expect(rejection({ drop: [''] })).toContain('option `drop[0]`: must be a selector of 1–300 characters')
    expect(rejection({ drop: ['  '] })).toContain('option `drop[0]`: must be a selector, not blank')
    expect(rejection({ drop: ['.x'.repeat(151)] })).toContain('option `drop[0]`: must be a selector of 1–300 characters')
    expect(rejection({ keep: Array.from({ length: 201 }, (_, i) => `.k${i}`) })).toContain('option `keep`: must have at most 200 entries')
  })

  it('refuse more than 4 states, and a state that is neither an attribute of <html> nor a class', () => {
    expect(rejection({ states: ['.a', '.b', '.c', '.d', '.e'] })).toContain('option `states`: must have at most 4 entries')
    for (const bad of ['dark', '[data-theme=dark', '[data-theme="da"rk"]', '[data theme]', 'html.dark', '.dark .x', '[data-theme=dark] ', '[1a]', '[data-theme=a b]']) {
      expect(rejection({ states: [bad] }), bad).toContain('option `states[0]`: must be an attribute selector ([data-theme=dark], [data-theme="dark"], [data-dark]) or a class (.dark)')
    }
    expect(resolveOptions({ states: ['[data-theme=dark]', '[data-theme="dark blue"]', '[data-dark]', '.dark'] }, {}).selection?.states).toHaveLength(4)
  })

  it('refuse a switch that is not a boolean', () => {
    expect(rejection({ keepFontFaces: 'no' })).toContain('option `keepFontFaces`')
  })
})
