import { normalizeHostname } from '../yield/domainVerification';

/**
 * The hostname a Host (or X-Forwarded-Host) value names, spelt as custom domains are stored: lower case,
 * without the port, the IPv6 brackets or the trailing dot of a fully qualified name, so
 * `SHOP.example.com.:443` is `shop.example.com` (security review III, finding 5).
 */
export function hostnameOfHost(host: string): string {
  const value = host.trim().toLowerCase();
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(value);
  return (bracketed ? bracketed[1]! : value.replace(/:\d*$/, '')).replace(/\.+$/, '');
}

/**
 * The one reading of a request's host for custom domains, shared by the custom-domain guard, the health
 * shortcut and the yield site route: the custom hostname the host names, or undefined when it cannot be
 * one (missing, the API's own host from PUBLIC_BASE_URL, an IP address, a single label, not a DNS name).
 */
export function customHostnameReader(
  publicBaseUrl: string,
): (host: string | undefined) => string | undefined {
  const apiHost = hostnameOfHost(new URL(publicBaseUrl).host);
  return (host) => {
    if (!host) return undefined;
    const hostname = hostnameOfHost(host);
    if (hostname === apiHost) return undefined;
    const normalized = normalizeHostname(hostname);
    return 'hostname' in normalized ? normalized.hostname : undefined;
  };
}
