import { describe, expect, it } from 'vitest'
import { SILENT_HOST_MS, SilentHosts } from '../../src/engine/silent-hosts.ts'

describe('SilentHosts', () => {
  it('keeps a tenant’s silent hosts for a while, for that tenant only', () => {
    let now = 1_000_000
    const hosts = new SilentHosts(() => now)
    hosts.add('alice', ['cdn.example:443'])
    expect(hosts.of('alice')).toEqual(['cdn.example:443'])
    expect(hosts.of('bob')).toEqual([])
    now += SILENT_HOST_MS - 1
    expect(hosts.of('alice')).toEqual(['cdn.example:443'])
    // Past its time the host is waited for again, by one page.
    now += 1
    expect(hosts.of('alice')).toEqual([])
  })

  it('keeps at most 50 hosts for a tenant, the oldest going first', () => {
    const hosts = new SilentHosts(() => 0)
    hosts.add('alice', Array.from({ length: 60 }, (_, index) => `h${index}:443`))
    const kept = hosts.of('alice')
    expect(kept).toHaveLength(50)
    expect(kept[0]).toBe('h10:443')
  })
})
