/**
 * The service's network policy against a table: an address inside every refused range (the
 * first, middle and last of each), every way an IPv6 address carries an IPv4 one, the
 * machine's own interfaces, and public addresses that must still pass. A refusal of a name
 * never says what the name resolved to.
 */
import type { NetworkInterfaceInfo } from 'node:os'
import { afterEach, describe, expect, it, vi } from 'vitest'

/** Interfaces the test adds to the machine's, as a host with a public address would have. */
const extra = vi.hoisted(() => ({ interfaces: [] as NetworkInterfaceInfo[] }))

vi.mock('node:os', async (importOriginal) => {
  const os = await importOriginal<typeof import('node:os')>()
  const networkInterfaces = (): NodeJS.Dict<NetworkInterfaceInfo[]> => ({ ...os.networkInterfaces(), test0: extra.interfaces })
  return { ...os, default: { ...os, networkInterfaces }, networkInterfaces }
})

const { createNetworkPolicy, isBlockedAddress, refusedResolution, refusedUrl } = await import('../../src/service/network.ts')
const { networkInterfaces } = await import('node:os')

/** The IANA special-purpose registries' rows (IPv4, then IPv6), and the ranges refused besides. */
const REFUSED: readonly (readonly [range: string, addresses: readonly string[]])[] = [
  ['0.0.0.0/8', ['0.0.0.0', '0.127.255.255', '0.255.255.255']],
  ['10.0.0.0/8', ['10.0.0.0', '10.127.255.255', '10.255.255.255']],
  ['100.64.0.0/10', ['100.64.0.0', '100.95.255.255', '100.127.255.255', '100.100.100.200']],
  ['127.0.0.0/8', ['127.0.0.0', '127.0.0.1', '127.127.255.255', '127.255.255.255']],
  ['169.254.0.0/16', ['169.254.0.0', '169.254.127.255', '169.254.255.255', '169.254.169.254']],
  ['172.16.0.0/12', ['172.16.0.0', '172.23.255.255', '172.31.255.255']],
  ['192.0.0.0/24', ['192.0.0.0', '192.0.0.8', '192.0.0.9', '192.0.0.10', '192.0.0.127', '192.0.0.170', '192.0.0.171', '192.0.0.255']],
  ['192.0.2.0/24', ['192.0.2.0', '192.0.2.127', '192.0.2.255']],
  ['192.31.196.0/24', ['192.31.196.0', '192.31.196.127', '192.31.196.255']],
  ['192.52.193.0/24', ['192.52.193.0', '192.52.193.127', '192.52.193.255']],
  ['192.88.99.0/24', ['192.88.99.0', '192.88.99.2', '192.88.99.127', '192.88.99.255']],
  ['192.168.0.0/16', ['192.168.0.0', '192.168.127.255', '192.168.255.255']],
  ['192.175.48.0/24', ['192.175.48.0', '192.175.48.127', '192.175.48.255']],
  ['198.18.0.0/15', ['198.18.0.0', '198.18.255.255', '198.19.255.255']],
  ['198.51.100.0/24', ['198.51.100.0', '198.51.100.127', '198.51.100.255']],
  ['203.0.113.0/24', ['203.0.113.0', '203.0.113.127', '203.0.113.255']],
  ['224.0.0.0/4 (multicast)', ['224.0.0.0', '231.255.255.255', '239.255.255.255']],
  ['240.0.0.0/4', ['240.0.0.0', '247.255.255.255', '255.255.255.254', '255.255.255.255']],
  ['::1/128', ['::1', '0:0:0:0:0:0:0:1']],
  ['::/128', ['::', '0:0:0:0:0:0:0:0']],
  ['::/96 (IPv4-compatible)', ['::2', '::127.0.0.1', '::7f00:1', '::8.8.8.8', '::ffff:ffff']],
  ['::ffff:0:0/96 (IPv4-mapped)', ['::ffff:0:0', '::ffff:127.0.0.1', '::ffff:7f00:1', '::FFFF:7F00:1', '0:0:0:0:0:ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:8.8.8.8', '::ffff:ffff:ffff']],
  ['::ffff:0:0:0/96 (IPv4-translated)', ['::ffff:0:0:0', '::ffff:0:127.0.0.1', '::ffff:0:808:808', '::ffff:0:ffff:ffff']],
  ['64:ff9b::/96', ['64:ff9b::', '64:ff9b::a00:1', '64:ff9b::8.8.8.8', '64:ff9b::ffff:ffff']],
  ['64:ff9b:1::/48', ['64:ff9b:1::', '64:ff9b:1::1', '64:ff9b:1::7f00:1', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff']],
  ['100::/64', ['100::', '100::1', '100::ffff:ffff:ffff:ffff']],
  ['100:0:0:1::/64', ['100:0:0:1::', '100:0:0:1::1', '100::1:ffff:ffff:ffff:ffff']],
  ['2001::/23', ['2001::', '2001:ff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2001::/32 (Teredo)', ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2001:1::1/128, 2001:1::2/128, 2001:1::3/128', ['2001:1::1', '2001:1::2', '2001:1::3']],
  ['2001:2::/48', ['2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff']],
  ['2001:3::/32', ['2001:3::', '2001:3:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2001:4:112::/48', ['2001:4:112::', '2001:4:112:ffff:ffff:ffff:ffff:ffff']],
  ['2001:10::/28', ['2001:10::', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2001:20::/28', ['2001:20::', '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2001:30::/28', ['2001:30::', '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2001:db8::/32', ['2001:db8::', '2001:db8::1', '2001:db8:7fff:ffff:ffff:ffff:ffff:ffff', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2002::/16 (6to4)', ['2002::', '2002:7f00:1::', '2002:808:808::1', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['2620:4f:8000::/48', ['2620:4f:8000::', '2620:4f:8000:ffff:ffff:ffff:ffff:ffff']],
  ['3fff::/20', ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['5f00::/16', ['5f00::', '5f00::1', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fc00::/7', ['fc00::', 'fd00:ec2::254', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fe80::/10', ['fe80::', 'fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fec0::/10 (site-local)', ['fec0::', 'fec0::1', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['ff00::/8 (multicast)', ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['outside 2000::/3', ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '4000::', 'e000::1']],
]

/** Public, and next to a refused range for some: each must still be fetched. */
const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '93.184.216.34', '192.0.1.255', '192.0.3.0', '198.51.99.255', '203.0.114.0', '223.255.255.255', '2606:4700:4700::1111', '2606:2800:220:1::1', '2001:200::1', '2003::1', '2a00:1450:4001:82b::200e']

const urlOf = (address: string, port = 8080): URL => new URL(`http://${address.includes(':') ? `[${address}]` : address}:${port}/`)
const policyFor = (resolve: (host: string) => Promise<string[]>, allowOrigins: string[] = []) => createNetworkPolicy({ allowPrivateNetworks: false, allowOrigins, resolve })
const at = (addresses: string[]) => async () => addresses

afterEach(() => {
  extra.interfaces = []
  vi.useRealTimers()
})

describe('every special-purpose range, and every IPv6 form that carries an IPv4 address', () => {
  it.each(REFUSED)('refuses %s', async (_range, addresses) => {
    for (const address of addresses) {
      expect(isBlockedAddress(address), address).toBe(true)
      // As a literal: the URL parser spells it its own way (::127.0.0.1 → ::7f00:1), the policy refuses it all the same.
      expect(refusedUrl(urlOf(address)), address).toMatch(/is refused by the network policy/)
      // As what a name resolves to, at generate's second look and at the gate.
      expect(await refusedResolution(new URL('http://tenant.example/'), at([address])), address).toBe('tenant.example is refused by the network policy')
      expect(await policyFor(at(['93.184.215.14', address])).admit('tenant.example', 443, ['https:']), address).toEqual({ refused: 'tenant.example is refused by the network policy' })
    }
  })

  it.each(['http://[::127.0.0.1]:8080/', 'http://[::ffff:7f00:1]/', 'http://[::ffff:127.0.0.1]/', 'http://[64:ff9b::a00:1]/', 'http://[64:ff9b:1::1]/', 'http://[2002:7f00:1::]/', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'http://[fec0::1]/', 'http://[100::1]/', 'http://[2001:db8::1]/', 'http://192.0.2.1/', 'http://198.51.100.7/', 'http://203.0.113.9/', 'http://192.88.99.1/'])(
    'refuses the literal %s, naming the literal as the URL parser reads it',
    (text) => {
      const url = new URL(text)
      const literal = url.hostname.replace(/^\[|\]$/g, '')
      expect(refusedUrl(url)).toBe(`${literal} is refused by the network policy (an internal or special-purpose address)`)
    },
  )

  it('refuses an address with a zone: it is on a link, whatever it reads as', () => {
    expect(isBlockedAddress('fe80::1%eth0')).toBe(true)
    expect(isBlockedAddress('2606:4700:4700::1111%1')).toBe(true)
  })

  it.each(PUBLIC)('still fetches %s', async (address) => {
    expect(isBlockedAddress(address)).toBe(false)
    expect(refusedUrl(urlOf(address))).toBeNull()
    expect(await refusedResolution(new URL('http://site.example/'), at([address]))).toBeNull()
    expect(await policyFor(at([address])).admit('site.example', 443, ['https:'])).toEqual({ addresses: [address] })
    expect(await policyFor(at([])).admit(address, 443, ['https:'])).toEqual({ addresses: [address] })
  })
})

describe("the machine's own addresses", () => {
  it('refuses every address of every interface of this machine', async () => {
    const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((each) => each.address))
    expect(addresses.length).toBeGreaterThan(0)
    for (const address of addresses) {
      expect(isBlockedAddress(address), address).toBe(true)
      expect(await policyFor(at([address])).admit('self.example', 80, ['http:']), address).toEqual({ refused: 'self.example is refused by the network policy' })
    }
  })

  it('refuses an interface in a public range, read when the policy is made', async () => {
    const policy = policyFor(at(['8.8.4.4']))
    expect(await policy.admit('self.example', 80, ['http:'])).toEqual({ addresses: ['8.8.4.4'] })
    extra.interfaces = [
      { address: '8.8.4.4', netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '8.8.4.4/24' },
      { address: '2606:4700:4700::1001', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', mac: '02:00:00:00:00:01', internal: false, cidr: '2606:4700:4700::1001/64', scopeid: 0 },
    ]
    const fresh = policyFor(at(['8.8.4.4']))
    expect(await fresh.admit('self.example', 80, ['http:'])).toEqual({ refused: 'self.example is refused by the network policy' })
    expect(fresh.refusedUrl(new URL('http://8.8.4.4/'))).toBe('8.8.4.4 is refused by the network policy (an internal or special-purpose address)')
    expect(fresh.refusedUrl(new URL('http://[2606:4700:4700::1001]/'))).not.toBeNull()
    // Its neighbours are other hosts, public ones.
    expect(isBlockedAddress('8.8.4.5')).toBe(false)
    expect(isBlockedAddress('2606:4700:4700::1111')).toBe(false)
  })

  it('sees an interface that came up after the policy was made, within a second', async () => {
    vi.useFakeTimers({ toFake: ['performance'] })
    const policy = policyFor(at(['9.9.9.9']))
    expect(await policy.admit('self.example', 80, ['http:'])).toEqual({ addresses: ['9.9.9.9'] })
    extra.interfaces = [{ address: '9.9.9.9', netmask: '255.255.255.255', family: 'IPv4', mac: '02:00:00:00:00:02', internal: false, cidr: '9.9.9.9/32' }]
    vi.advanceTimersByTime(1001)
    expect(await policy.admit('self.example', 80, ['http:'])).toEqual({ refused: 'self.example is refused by the network policy' })
  })

  it('lets them through where the policy is open: allowPrivateNetworks, or an allowed origin', async () => {
    extra.interfaces = [{ address: '8.8.4.4', netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '8.8.4.4/24' }]
    const embedded = createNetworkPolicy({ allowPrivateNetworks: true, allowOrigins: [], resolve: at(['8.8.4.4', '127.0.0.1']) })
    expect(embedded.refusedUrl(new URL('http://127.0.0.1:5173/'))).toBeNull()
    expect(embedded.refusedUrl(new URL('http://8.8.4.4/'))).toBeNull()
    expect(await embedded.admit('self.example', 80, ['http:'])).toEqual({ addresses: ['8.8.4.4', '127.0.0.1'] })
    const staging = policyFor(at(['8.8.4.4', '10.1.2.3']), ['https://staging.internal:8443'])
    expect(await staging.admit('staging.internal', 8443, ['https:'])).toEqual({ addresses: ['8.8.4.4', '10.1.2.3'] })
    expect(await staging.refusedResolution(new URL('https://staging.internal:8443/'))).toBeNull()
    expect(await staging.admit('staging.internal', 8444, ['https:'])).toEqual({ refused: 'staging.internal is refused by the network policy' })
  })
})

describe('refusals name no resolved address', () => {
  it('says the name is refused, never where it points', async () => {
    const policy = policyFor(async () => ['10.0.0.7'])
    const messages = [
      await policy.refusedResolution(new URL('http://vm.example/')),
      await refusedResolution(new URL('http://vm.example/'), async () => ['10.0.0.7']),
      ...Object.values(await policy.admit('vm.example', 80, ['http:'])),
      ...Object.values(await policy.admit('VM.example.', 443, ['https:', 'http:'])),
    ]
    expect(messages).toEqual(Array(4).fill('vm.example is refused by the network policy'))
    for (const message of messages) expect(message).not.toContain('10.0.0.7')
  })

  it('names none of several answers either, public ones included', async () => {
    const answers = ['93.184.215.14', '10.0.0.7', '::ffff:7f00:1', '2606:4700:4700::1111']
    const admission = await policyFor(async () => answers).admit('mixed.example', 80, ['http:'])
    expect(admission).toEqual({ refused: 'mixed.example is refused by the network policy' })
    for (const answer of answers) expect(JSON.stringify(admission)).not.toContain(answer)
  })
})
