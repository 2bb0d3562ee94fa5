/**
 * The grant of a token's (client_id, tenant_id) as one row of `GrantView`, and the condition of `admitGrant` on
 * it (tokens.ts), for SQL. `$client` and `$store` are the statement's parameter references, `$env` the token's
 * environment. Fragments of the rate limiter's admission statement (src/ratelimit/sql.ts), which reads the grant
 * and takes rate-limit slots in one round trip; Prisma cannot join a read into another statement.
 */
export function grantSql(params: { client: string; store: string; env: string }): { select: string; grantAdmits: string } {
  return {
    select: `SELECT a.id AS "applicationId", a.status::text AS "applicationStatus", a.environment::text AS "appEnvironment",
        s.id AS "storeId", s.environment::text AS "storeEnvironment", g.status::text AS "grantStatus"
      FROM "Grant" g JOIN "Application" a ON a.id = g."applicationId" JOIN "Store" s ON s.id = g."storeId"
      WHERE a."clientId" = ${params.client} AND s.code = ${params.store}`,
    grantAdmits: `"grantStatus" = 'ACTIVE' AND "applicationStatus" = 'ACTIVE' AND "appEnvironment" = ${params.env} AND "storeEnvironment" = ${params.env}`,
  };
}
