/**
 * SHA-256 of bytes in lower-case hex. The platform computes it (the core does no crypto of its own), like the
 * firmware digest; the core uses it to tell things apart without showing them (a webhook URL's listing).
 */
export type Sha256Hex = (data: Uint8Array) => string;

export const SHA256_HEX = Symbol.for('hortus.Sha256Hex');
