/**
 * Tokens as the service keeps them: only their SHA-256 hashes are stored, a request's
 * token is hashed and compared in constant time, and a new token is shown once.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { TOKEN_PATTERN } from '../contract/api-contract.ts'

const BEARER = /^Bearer ([\x21-\x7e]+)$/

/** Hex SHA-256 of a token: what the store keeps instead of the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/** The token of an `Authorization: Bearer …` header, or null when missing or malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null
  const match = BEARER.exec(header.trim())
  if (!match || !TOKEN_PATTERN.test(match[1]!)) return null
  return match[1]!
}

/** Constant-time equality of two hex hashes. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right)
}

/** A fresh token: `ccs_` and 32 random bytes in base64url (47 printable characters). */
export function createToken(): string {
  return `ccs_${randomBytes(32).toString('base64url')}`
}
