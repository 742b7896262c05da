import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cacheDirectory, cacheKey, createResultCache } from '../../src/core/cache.ts'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ucc-cache-'))
  dirs.push(dir)
  return dir
}

const parts = { service: 'https://svc.example', url: 'https://site.example/', viewports: [{ width: 1300, height: 900 }] }

describe('result cache', () => {
  it('keys on service, URL and viewports', () => {
    const key = cacheKey(parts)
    expect(cacheKey({ ...parts })).toBe(key)
    expect(cacheKey({ ...parts, service: 'https://other.example' })).not.toBe(key)
    expect(cacheKey({ ...parts, url: 'https://site.example/a' })).not.toBe(key)
    expect(cacheKey({ ...parts, viewports: [{ width: 1300, height: 901 }] })).not.toBe(key)
  })

  it('stores, expires at ttl, and leaves no temp file', async () => {
    const dir = await tempDir()
    let now = 1_000_000
    const cache = createResultCache({ dir, ttlMs: 1000, now: () => now })
    const key = cacheKey(parts)
    expect(await cache.get(key)).toBeNull()
    const firstScreen = [{ viewport: { width: 412, height: 915 }, share: 0.008, elements: ['footer.site'] }]
    await cache.set(key, { css: 'p{margin:0}', network: null, firstScreen, engine: 'static' })
    expect(await cache.get(key)).toEqual({ css: 'p{margin:0}', network: null, firstScreen, engine: 'static', createdAt: 1_000_000 })
    now += 999
    expect(await cache.get(key)).not.toBeNull()
    now += 1
    expect(await cache.get(key)).toBeNull()
    expect(await readdir(dir)).toEqual([`${key}.json`])
  })

  it('reads a corrupt, foreign or mismatched entry as a miss', async () => {
    const dir = await tempDir()
    const cache = createResultCache({ dir, ttlMs: 1000 })
    const key = cacheKey(parts)
    for (const text of ['', '{', 'null', '{"format":2,"key":"x","css":"","createdAt":0}', JSON.stringify({ format: 1, key: 'other', css: 'a', createdAt: Date.now() })]) {
      await writeFile(join(dir, `${key}.json`), text)
      expect(await cache.get(key), text).toBeNull()
    }
  })

  it('defaults below the nearest package.json', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'pkg/src/pages'), { recursive: true })
    await writeFile(join(dir, 'pkg/package.json'), '{}')
    expect(cacheDirectory(null, join(dir, 'pkg/src/pages'))).toBe(join(dir, 'pkg/node_modules/.cache/unplugin-critical-css'))
    expect(cacheDirectory('.c', join(dir, 'pkg/src'))).toBe(join(dir, 'pkg/src/.c'))
  })
})

describe('the user’s say over the critical set in the key (issue 49)', () => {
  it('leaves the key of a build without one as it was, and gives a build with one a key of its own', () => {
    const plain = cacheKey(parts)
    // What the key was before the selection existed: a cache kept by an older version is still hit.
    expect(plain).toBe(createHash('sha256').update(JSON.stringify([2, parts.service, parts.url, [[1300, 900]], []])).digest('hex'))
    expect(cacheKey({ ...parts, selection: null })).toBe(plain)
    expect(cacheKey({ ...parts, selection: { keep: [], fontFaces: true } })).toBe(plain)
    const keep = cacheKey({ ...parts, selection: { keep: ['.menu.is-open'] } })
    expect(keep).not.toBe(plain)
    expect(cacheKey({ ...parts, selection: { drop: ['.menu.is-open'] } })).not.toBe(keep)
    expect(cacheKey({ ...parts, selection: { states: ['.dark'] } })).not.toBe(plain)
    expect(cacheKey({ ...parts, selection: { fontFaces: false } })).not.toBe(plain)
    expect(cacheKey({ ...parts, thirdParty: 'cut', selection: { keyframes: false } })).not.toBe(cacheKey({ ...parts, thirdParty: 'cut' }))
  })
})
