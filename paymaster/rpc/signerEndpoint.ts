import type { RequestOptions } from 'node:http';

/**
 * Where the signing service listens, from SIGNER_URL: an `http(s)://` base URL (a remote signer, or one
 * in another container), or a Unix-domain socket, `unix:///run/stablepay/signer.sock`, when it runs on
 * the same host. Every signed paymaster answer crosses this leg; a local socket skips the TCP stack
 * (no ports, no Nagle, no loopback checksums) and is reachable only by the processes the file's mode lets in.
 */
export type SignerEndpoint =
  { kind: 'socket'; socketPath: string } | { kind: 'network'; base: URL; secure: boolean };

export const SIGNER_SOCKET_PROTOCOL = 'unix:';

export function parseSignerEndpoint(signerUrl: string): SignerEndpoint {
  const url = new URL(signerUrl);
  if (url.protocol === SIGNER_SOCKET_PROTOCOL) {
    const socketPath = decodeURIComponent(url.pathname);
    if (url.host || !socketPath.startsWith('/'))
      throw new Error(
        `SIGNER_URL ${signerUrl}: a socket is named by its absolute path, unix:///path/to/signer.sock`,
      );
    return { kind: 'socket', socketPath };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`SIGNER_URL ${signerUrl}: expected http://, https:// or unix:///path/to/signer.sock`);
  return {
    kind: 'network',
    base: new URL(url.href.endsWith('/') ? url.href : `${url.href}/`),
    secure: url.protocol === 'https:',
  };
}

/** node:http request options for `path` (`rpc`, `health`) on the signing service. */
export function signerRequestOptions(endpoint: SignerEndpoint, path: string): RequestOptions {
  if (endpoint.kind === 'socket') return { socketPath: endpoint.socketPath, path: `/${path}` };
  const url = new URL(path, endpoint.base);
  return {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
  };
}

/** For logs and readiness lines: the socket's path or the base URL. */
export function describeSignerEndpoint(endpoint: SignerEndpoint): string {
  return endpoint.kind === 'socket' ? `unix://${endpoint.socketPath}` : endpoint.base.href;
}
