/*
 * Hook URLs often carry their token in the path, the query or `user:password@`. Only the store and the
 * request itself see the whole URL: logs and errors name its origin, listings a masked form.
 */

const unparsable = 'an unparsable URL';

/** The scheme, host and port only: what logs and errors may say of a hook URL. */
export function webhookOrigin(url: string): string {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? unparsable : origin;
  } catch {
    return unparsable;
  }
}

/** Every URL in a text (an HTTP client's error message, say) cut to its origin. */
export function withOriginsOnly(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/giu, (url) => webhookOrigin(url));
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
    return unparsable;
  }
  const rest = `${parsed.pathname}${parsed.search}${parsed.hash}`.replace(/^\/+/u, '');
  const hidden = parsed.username !== '' || parsed.password !== '' || rest !== '';
  if (!hidden) return parsed.origin;
  return `${parsed.origin}/…${rest.length >= 16 ? rest.slice(-4) : ''}`;
}
