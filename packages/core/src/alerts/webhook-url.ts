/*
 * Hook URLs often carry their token in the path, the query or `user:password@`. Only the store and the
 * request itself see the whole URL: logs and errors name its origin (redactUrl), listings a masked form.
 */
import { redactUrl, UNPARSABLE_URL } from '../shared/url.js';

/** Every URL in a text (an HTTP client's error message, say) cut to its origin. */
export function withOriginsOnly(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/giu, (url) => redactUrl(url));
}

/**
 * How listings show a hook: its origin, then `/…` for whatever follows, with the last 4 characters of a
 * long rest so hooks on one origin can be told apart (a short rest could be guessed from 4 characters).
 */
export function maskWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return UNPARSABLE_URL;
  }
  const rest = `${parsed.pathname}${parsed.search}${parsed.hash}`.replace(/^\/+/u, '');
  const hidden = parsed.username !== '' || parsed.password !== '' || rest !== '';
  if (!hidden) return parsed.origin;
  return `${parsed.origin}/…${rest.length >= 16 ? rest.slice(-4) : ''}`;
}
