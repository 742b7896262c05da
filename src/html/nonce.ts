/** A CSP nonce value (base64 or base64url), short enough for an attribute: what the option, the inliner and the runtime accept. */
export const NONCE_PATTERN = /^[A-Za-z0-9+/=_-]{1,256}$/
/** What a nonce must be, as an error says it. */
export const NONCE_RULE = 'must be 1–256 characters of A–Z, a–z, 0–9, +, /, =, _ or - (a base64 value)'
