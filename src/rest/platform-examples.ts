import { SCOPES } from "../platform/auth/scopes.js";
import { EXPORT_ID, one, STORE_CODE, type OperationExamples } from "../platform/examples.js";
import { FIRST_API_VERSION, LATEST_API_VERSION } from "../platform/versions.js";
import { versionList } from "../modules/versions/render.js";
import type { PlatformOperationId } from "./platform-routes.js";

/** The examples of the routes no GraphQL operation answers (./platform-routes.ts), beside the domains' own. */

/** The pizzeria's example access token (a JWT of the documented shape). */
const ACCESS_TOKEN =
  "eyJhbGciOiJFZERTQSIsImtpZCI6ImtfMjAyNV8wMyIsInR5cCI6ImF0K2p3dCJ9.eyJ0ZW5hbnRfaWQiOiJQWjdLMk05UVhBIiwiZW52aXJvbm1lbnQiOiJTQU5EQk9YIn0.QLnIFalKrqfBsdRfS0958Il3fC0Qhz9a3VJUUwgd7ldXRz79aI6kYvdv2eqU2aegX22X6wP30zfzwa010--yCw";

export const platformExamples = {
  createToken: {
    request: {
      default: {
        summary: "Client credentials in the body",
        value: { grant_type: "client_credentials", client_id: "sbx_3kP9wQ2mVtR7xYc1", client_secret: "cs_live_2Jx8Qm4Vb7Tn1Lp5Zr9Wd3Hs6Kf0Gy" },
      },
      severalStores: {
        summary: "An Application granted on several stores names the store",
        value: {
          grant_type: "client_credentials",
          client_id: "sbx_3kP9wQ2mVtR7xYc1",
          client_secret: "cs_live_2Jx8Qm4Vb7Tn1Lp5Zr9Wd3Hs6Kf0Gy",
          tenant_id: STORE_CODE,
        },
      },
    },
    response: one("A SANDBOX token for the pizzeria", {
      access_token: ACCESS_TOKEN,
      token_type: "Bearer",
      expires_in: 3600,
      scope: "orders:read orders:write customers:read catalog:read merchant:read webhooks:manage",
      tenant_id: STORE_CODE,
      environment: "SANDBOX",
    }),
    problem: {
      summary: "Wrong client_secret",
      code: "INVALID_CLIENT",
      detail: "Unknown client_id or wrong client_secret.",
      instance: "/partner/auth/token",
      error: "invalid_client",
    },
  },
  revokeToken: {
    request: {
      default: {
        summary: "Client credentials in the body",
        value: {
          token: ACCESS_TOKEN,
          token_type_hint: "access_token",
          client_id: "sbx_3kP9wQ2mVtR7xYc1",
          client_secret: "cs_live_2Jx8Qm4Vb7Tn1Lp5Zr9Wd3Hs6Kf0Gy",
        },
      },
      bearer: { summary: "The token itself also in Authorization: Bearer", value: { token: ACCESS_TOKEN } },
    },
    response: one("Revoked, or nothing to revoke", {}),
    problem: {
      summary: "A post from another website's page",
      code: "FORBIDDEN",
      detail: "Cross-site browser requests are refused here: call this endpoint from a server, or from a page of this site.",
      instance: "/partner/auth/revoke",
      errors: [{ field: "Sec-Fetch-Site", code: "CROSS_SITE", message: "`Sec-Fetch-Site` must not be cross-site" }],
      error: "invalid_request",
    },
  },
  exchangePortalLink: {
    request: one("The secret from the link's fragment", { link_secret: "Jq3xv8Tn0bK5yWm2Lr7Pz4Hc9Fd1Sg6Ae3Ut8Vo2Ni" }),
    response: one("A SANDBOX token for the link's Application and store", {
      access_token: ACCESS_TOKEN,
      token_type: "Bearer",
      expires_in: 3600,
      scope: "orders:read customers:read catalog:read merchant:read webhooks:manage",
      tenant_id: STORE_CODE,
      environment: "SANDBOX",
    }),
    problem: {
      summary: "A link used before",
      code: "INVALID_TOKEN",
      detail:
        "This portal link was already used at 2025-03-01T18:30:00.012Z; a link signs in once. Ask the platform team for a new portal link, or sign in with the Application's client_id and client_secret.",
      instance: "/partner/auth/portal-link",
      error: "invalid_grant",
    },
  },
  getJwks: {
    response: one("The one active signing key", {
      keys: [{ kty: "OKP", crv: "Ed25519", x: "GymIuw0R4gURQts_frOl4ClyHXzovySg6bVIzPA0diU", kid: "k_2025_03", alg: "EdDSA", use: "sig" }],
    }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/.well-known/jwks.json",
    },
  },
  getAuthorizationServerMetadata: {
    response: one("The service at https://api.example.com", {
      issuer: "https://api.example.com",
      token_endpoint: "https://api.example.com/partner/auth/token",
      jwks_uri: "https://api.example.com/.well-known/jwks.json",
      revocation_endpoint: "https://api.example.com/partner/auth/revoke",
      grant_types_supported: ["client_credentials"],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      scopes_supported: [...SCOPES],
      service_documentation: "https://api.example.com/docs",
    }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/.well-known/oauth-authorization-server",
    },
  },
  downloadExportFile: {
    // The file is gzip bytes: no JSON example of it; its typical error is a link used past its expiry.
    problem: {
      summary: "A signed link past its expiresAt",
      code: "FORBIDDEN",
      detail: "This download link has expired. Get a fresh link: GET /public/v1/exports/{id} answers one in `url`.",
      instance: `/public/v1/exports/${EXPORT_ID}/file`,
    },
  },
  getOpenApiDocument: {
    response: one("This document (abridged)", { openapi: "3.1.0", info: { title: "Partner Platform API", version: LATEST_API_VERSION }, paths: {} }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/public/v1/openapi.json",
    },
  },
  listApiVersions: {
    response: one("Two versions, the older one deprecated", {
      data: versionList({ [FIRST_API_VERSION]: { deprecatedAt: new Date("2027-01-15T00:00:00Z"), sunsetAt: new Date("2027-07-15T00:00:00Z") } }),
      latest: LATEST_API_VERSION,
    }),
    problem: {
      summary: "An unexpected failure",
      code: "INTERNAL_SERVER_ERROR",
      detail: "Something went wrong on our side. Retry with backoff; if it persists, quote traceId 672f8864d2274d3b9f11ac4db44e7ee1 to support.",
      instance: "/public/v1/versions",
    },
  },
} satisfies Record<PlatformOperationId, OperationExamples>;
