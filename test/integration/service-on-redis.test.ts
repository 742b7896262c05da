/**
 * The service suite (service.test.ts) once more, with the service's state on a real
 * redis-server (127.0.0.1): every behaviour of the contract holds on both backends.
 */
import { Redis } from 'ioredis'
import { afterAll, afterEach } from 'vitest'
import { startRedis } from '../fixtures/redis.ts'

const redis = await startRedis()
process.env.UCC_TEST_REDIS_URL = redis.url
afterEach(async () => {
  // Each test starts from an empty state, as it does in memory.
  const client = new Redis(redis.url)
  await client.flushall()
  client.disconnect()
})
afterAll(async () => {
  await redis.close()
})

await import('./service.test.ts')
