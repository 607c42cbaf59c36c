import type { Audience, AuthKind } from './route';

/**
 * SPEC: a resource served under two parallel route sets with identical shapes, the dashboard's (JWT,
 * under `/v1/merchants/me/…`) and the API key's (`sk_`). Every handler is defined once and mounted under
 * both, so the two surfaces cannot drift apart.
 */
export interface TwinRouteSet {
  base: string;
  auth: Extract<AuthKind, 'jwt' | 'sk'>;
  audience: Audience;
  /** Appended to summaries so the two operations stay apart in the OpenAPI document. */
  label: string;
}

/** The JWT set first, then the API key's, for one resource. */
export function twinRouteSets({
  jwtBase,
  skBase,
}: {
  jwtBase: string;
  skBase: string;
}): readonly TwinRouteSet[] {
  return [
    { base: jwtBase, auth: 'jwt', audience: 'dashboard', label: 'dashboard' },
    { base: skBase, auth: 'sk', audience: 'dashboard', label: 'API key' },
  ];
}
