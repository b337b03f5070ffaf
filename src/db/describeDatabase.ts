/** host:port/database of a connection URL, never its credentials: safe for logs and error messages. */
export function describeDatabase(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    const host = url.hostname === '' ? (url.searchParams.get('host') ?? 'localhost') : url.hostname;
    const port = url.port === '' ? '5432' : url.port;
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default database)';
    return `${host}:${port}/${database}`;
  } catch {
    return '(unparseable database URL)';
  }
}

/** The URL with its password replaced, for the rare place that must show the whole URL. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password !== '') url.password = '***';
    for (const key of ['password', 'sslpassword']) {
      if (url.searchParams.has(key)) url.searchParams.set(key, '***');
    }
    return url.toString();
  } catch {
    return '(unparseable database URL)';
  }
}
