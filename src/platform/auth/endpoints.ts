/**
 * Where the OAuth 2.0 endpoints are served: their rows in the platform route table, and the metadata that points
 * clients at them (RFC 8414), both read these.
 */
export const TOKEN_PATH = "/partner/auth/token";
export const REVOCATION_PATH = "/partner/auth/revoke";
export const JWKS_PATH = "/.well-known/jwks.json";
export const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";
