/**
 * The embedded mode's build server: the bundle's files as the bundler holds them, below
 * the base path, the public dir after them, nothing outside either.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filesForPath, serveBuild, type BuildServer } from '../../src/core/build-server.ts'

describe('filesForPath', () => {
  it('maps request paths below the base to output files', () => {
    expect(filesForPath('/', '/')).toEqual(['index.html', 'index.htm'])
    expect(filesForPath('/app/', '/app/')).toEqual(['index.html', 'index.htm'])
    expect(filesForPath('/app', '/app/')).toEqual(['index.html', 'index.htm'])
    expect(filesForPath('/app/pricing/', '/app/')).toEqual(['pricing/index.html', 'pricing/index.htm'])
    expect(filesForPath('/app/about.html', '/app/')).toEqual(['about.html'])
    expect(filesForPath('/app/assets/a%20b.css', '/app/')).toEqual(['assets/a b.css'])
    expect(filesForPath('/app/about', '/app/')).toEqual(['about', 'about.html', 'about/index.html', 'about.htm', 'about/index.htm'])
  })

  it('refuses paths outside the base and any that climb out of it', () => {
    expect(filesForPath('/other/index.html', '/app/')).toBeNull()
    expect(filesForPath('/app/../secret', '/app/')).toBeNull()
    expect(filesForPath('/app/%2e%2e/secret', '/app/')).toBeNull()
    expect(filesForPath('/app/a%00b', '/app/')).toBeNull()
  })
})

describe('serveBuild', () => {
  let dir: string
  let server: BuildServer
  const bundle = new Map<string, string | Uint8Array>([
    ['index.html', '<!doctype html><title>home</title>'],
    ['assets/site.css', 'body{color:red}'],
    ['about/index.html', new TextEncoder().encode('<p>about</p>')],
  ])

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccs-public-'))
    await mkdir(join(dir, 'img'))
    await writeFile(join(dir, 'img', 'logo.svg'), '<svg/>')
    await writeFile(join(dir, 'assets-site.css'), 'from public')
    server = await serveBuild({ read: async (file) => bundle.get(file) ?? null, files: async () => [], lazySheets: async () => new Set(), staticDirs: [dir] }, '/app/')
  })
  afterAll(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })

  const get = (path: string, method = 'GET'): Promise<Response> => fetch(new URL(path, server.siteUrl.origin), { method })

  it('listens on 127.0.0.1 below the base path', () => {
    expect(server.siteUrl.hostname).toBe('127.0.0.1')
    expect(server.siteUrl.pathname).toBe('/app/')
  })

  it('serves the bundle as it is, with content types', async () => {
    const home = await get('/app/')
    expect(home.status).toBe(200)
    expect(home.headers.get('content-type')).toMatch(/^text\/html/)
    expect(await home.text()).toBe('<!doctype html><title>home</title>')
    const css = await get('/app/assets/site.css')
    expect(css.headers.get('content-type')).toMatch(/^text\/css/)
    expect(await css.text()).toBe('body{color:red}')
    expect(await (await get('/app/about')).text()).toBe('<p>about</p>')
  })

  it('serves the public dir after the bundle', async () => {
    const logo = await get('/app/img/logo.svg')
    expect(logo.headers.get('content-type')).toBe('image/svg+xml')
    expect(await logo.text()).toBe('<svg/>')
  })

  it('answers 404 outside the base or the build, 405 to writes', async () => {
    expect((await get('/index.html')).status).toBe(404)
    expect((await get('/app/missing.css')).status).toBe(404)
    expect((await get('/app/..%2f..%2fetc/passwd')).status).toBe(404)
    expect((await get('/app/%E0%A4%A')).status).toBe(404)
    expect((await get('/app/', 'POST')).status).toBe(405)
  })
})
