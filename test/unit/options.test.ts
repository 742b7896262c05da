import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../src/core/errors.ts'
import { checkServiceOptions, resolveOptions, type Options } from '../../src/core/options.ts'

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
      baseUrl: null,
      token: null,
      siteUrl: null,
      viewports: [{ width: 1300, height: 900 }, { width: 412, height: 915 }],
      preload: 'body',
      nonce: null,
      concurrency: null,
      timeoutMs: 120_000,
      strict: false,
      cache: { dir: null, ttlMs: 86_400_000 },
      report: null,
      rateLimit: null,
      enabled: null,
      envProblems: [],
    })
  })

  it('takes service, token and site from the env, options first', () => {
    const env = { CRITICAL_CSS_BASE_URL: 'https://env.example', CRITICAL_CSS_API_TOKEN: TOKEN, CRITICAL_CSS_SITE_URL: 'https://site.example' }
    const fromEnv = resolveOptions({}, env)
    expect(fromEnv.baseUrl).toBe('https://env.example')
    expect(fromEnv.token?.reveal()).toBe(TOKEN)
    expect(fromEnv.siteUrl?.href).toBe('https://site.example/')
    expect(resolveOptions({ baseUrl: 'https://option.example' }, env).baseUrl).toBe('https://option.example')
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

  it('names the env var at fault when a build runs, not when the plugin is created', () => {
    const resolved = resolveOptions({}, { CRITICAL_CSS_BASE_URL: 'not a url', CRITICAL_CSS_API_TOKEN: 'short' })
    expect(() => checkServiceOptions(resolved)).toThrow(/env CRITICAL_CSS_BASE_URL must be an absolute http\(s\) URL; env CRITICAL_CSS_API_TOKEN/)
    // An option overrides a malformed env var.
    expect(resolveOptions({ baseUrl: 'https://svc.example' }, { CRITICAL_CSS_BASE_URL: 'not a url' }).envProblems).toEqual([])
  })

  it('never echoes a malformed token', () => {
    const bad = 'tok with spaces that is long enough'
    expect(rejection({ token: bad })).not.toContain(bad)
    expect(() => checkServiceOptions(resolveOptions({ baseUrl: 'https://svc.example' }, { CRITICAL_CSS_API_TOKEN: bad }))).toThrow(/CRITICAL_CSS_API_TOKEN/)
    expect(() => checkServiceOptions(resolveOptions({ baseUrl: 'https://svc.example' }, { CRITICAL_CSS_API_TOKEN: bad }))).not.toThrow(bad)
  })

  it('keeps the token out of inspect, JSON and String', () => {
    const resolved = resolveOptions({ token: TOKEN }, {})
    expect(inspect(resolved, { depth: 5 })).not.toContain(TOKEN)
    expect(JSON.stringify(resolved)).not.toContain(TOKEN)
    expect(`${resolved.token}`).not.toContain(TOKEN)
  })
})

describe('checkServiceOptions', () => {
  it('accepts no service at all (embedded mode), relative pages included', () => {
    expect(() => checkServiceOptions(resolveOptions({}, {}))).not.toThrow()
    expect(() => checkServiceOptions(resolveOptions({ pages: ['/', 'about/'] }, {}))).not.toThrow()
  })

  it('names what is missing', () => {
    expect(() => checkServiceOptions(resolveOptions({ baseUrl: 'https://u:p@svc.example' }, {}))).toThrow(/CRITICAL_CSS_API_TOKEN/)
    expect(() => checkServiceOptions(resolveOptions({ baseUrl: 'https://u:p@svc.example' }, {}))).not.toThrow(/u:p/)
    expect(() => checkServiceOptions(resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN, pages: ['/'] }, {}))).toThrow(/CRITICAL_CSS_SITE_URL/)
    expect(() => checkServiceOptions(resolveOptions({ baseUrl: 'https://svc.example', token: TOKEN, pages: ['https://a.example/'] }, {}))).not.toThrow()
  })
})
