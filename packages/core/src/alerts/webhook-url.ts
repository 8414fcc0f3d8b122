/*
 * Hook URLs often carry their token in the path, the query or `user:password@`. Only the store and the
 * request itself see the whole URL: logs and errors name its origin (redactUrl), listings a masked form.
 */
import { type Sha256Hex } from '../shared/digest.port.js';
import { redactUrl, UNPARSABLE_URL } from '../shared/url.js';

/** Every URL in a text (an HTTP client's error message, say) cut to its origin. */
export function withOriginsOnly(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/giu, (url) => redactUrl(url));
}

/** How many hex digits of the URL's SHA-256 a masked form carries: 24 bits, enough for a group's hooks. */
const DIGEST_HEX = 6;

/**
 * How listings show a hook: its origin, then `/…` for whatever follows (the path, query or user:password@
 * may be its token, so none of it is shown) and `#` with the first 6 hex digits of the whole URL's SHA-256,
 * so hooks on one origin differ (`https://ntfy.example.org/… #a1b2c3`). A URL that is its origin shows as is.
 */
export function maskWebhookUrl(url: string, sha256Hex: Sha256Hex): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return UNPARSABLE_URL;
  }
  const rest = `${parsed.pathname}${parsed.search}${parsed.hash}`.replace(/^\/+/u, '');
  const hidden = parsed.username !== '' || parsed.password !== '' || rest !== '';
  if (!hidden) return parsed.origin;
  const digest = sha256Hex(new TextEncoder().encode(parsed.toString())).slice(0, DIGEST_HEX);
  return `${parsed.origin}/… #${digest}`;
}

/** Whether a text is a masked form (so it is echoed, not parsed as a URL and masked again). */
export function isMaskedWebhookUrl(text: string): boolean {
  return new RegExp(`^\\S+/… #[0-9a-f]{${DIGEST_HEX}}$`, 'u').test(text.trim());
}
