/**
 * A URL's password: `scheme://user:PASSWORD@`, up to the last `@` before the query. Generous on purpose: an
 * unencoded `@` or `/` in a password stays hidden, at the price of hiding a host when a path holds an `@` too.
 */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@"]*):[^\s?#"]*@/gi;

/**
 * `name=value` where the name says secret: URL query parameters (`?password=…`, `sslpassword=…`), libpq keyword
 * strings (`host=h password=…`) and environment-style text (`PGPASSWORD=…`). A value runs to the next
 * separator, or is one quoted string.
 */
const SECRET_ASSIGNMENT =
  /\b([\w.-]*(?:password|passwd|pwd|secret|token|sslkey|apikey|api_key))=("[^"]*"|'(?:[^'\\]|\\.)*'|[^\s&"',;]*)/gi;

/**
 * Free text with any credentials it carries replaced by `***`: the password of a URL (`postgres://u:***@h/db`)
 * and secret-named parameters (`?sslpassword=***`, `password=***`). The rest stays readable: user, host,
 * database, other parameters. For texts that may quote what an operator typed or a library received.
 */
export function redactSecretsInText(text: string): string {
  return text.replace(URL_PASSWORD, '$1:***@').replace(SECRET_ASSIGNMENT, '$1=***');
}
