import { serveSigningRoute } from './signingRoute';

/**
 * Baseline for the paymaster benchmark: the cost floor of producing a paymaster signature over HTTP.
 * `POST /sign` hashes and signs exactly as the signing service does (bench/targets/signingRoute.ts);
 * no policy, no database, no second hop, no deposit read.
 */
serveSigningRoute();
