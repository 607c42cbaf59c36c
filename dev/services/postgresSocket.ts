/**
 * The same database over the server's Unix-domain socket, for a Postgres on this host (issue 46, step 3):
 * the embedded server listens on `<dir>/.s.PGSQL.<port>` beside its TCP port (`dir` /tmp by default);
 * pg connects there when `host` is a directory. Loopback TCP runs the receiver's side in the sender's kernel
 * call and wakes it; the socket skips the TCP stack.
 */
export function localPostgresSocketUrl(tcpUrl: string, socketDirectory = '/tmp'): string {
  const url = new URL(tcpUrl);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')
    throw new Error(`${url.hostname} is not this host: its Postgres has no socket here`);
  url.searchParams.set('host', socketDirectory);
  return url.toString();
}
