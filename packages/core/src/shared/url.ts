/*
 * The one form of a URL that logs, errors and reports may show. Credentials (`user:password@`) are masked;
 * the query and fragment are dropped, since options and tokens live there (a hook's token, a broker's
 * password in `?password=`); the path is kept only when the caller asks for it (a MongoDB URI's database),
 * since hook URLs carry their token in the path.
 */

export const UNPARSABLE_URL = 'an unparsable URL';

/** scheme://, then the authority up to the first `/`, `?` or `#` (as WHATWG URL reads it), then the path. */
const urlParts = /^([a-z][a-z\d+.-]*:\/\/)([^/?#]*)([^?#]*)/iu;

/**
 * `scheme://***@host:port` (`***@` only when the URL carried credentials), plus the path with
 * `keep: 'path'`. Several hosts (`mongodb://a:1,b:2/db`) stay as they are. Never throws.
 */
export function redactUrl(url: string, keep: 'origin' | 'path' = 'origin'): string {
  const match = urlParts.exec(url.trim());
  if (match === null) return UNPARSABLE_URL;
  const [, scheme = '', authority = '', path = ''] = match;
  const at = authority.lastIndexOf('@');
  const hosts = authority.slice(at + 1);
  if (hosts === '' || /\s/u.test(hosts) || /\s/u.test(path)) return UNPARSABLE_URL;
  const credentials = at >= 0 ? '***@' : '';
  return `${scheme.toLowerCase()}${credentials}${hosts.toLowerCase()}${keep === 'path' ? path : ''}`;
}
