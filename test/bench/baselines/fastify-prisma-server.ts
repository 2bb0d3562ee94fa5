import Fastify from "fastify";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../../src/generated/prisma/client.js";
import { ApiError, notFound } from "../../../src/platform/errors.js";
import { isUuid } from "../../../src/platform/uuid.js";
import { DETAIL_INCLUDE, LIST_INCLUDE } from "./prisma-queries.js";
import { bearer, INVALID_TOKEN, NO_GRANT, NOT_SERVED, orderBody, orderReader, pageBody, problemText, TOKEN_CHECKS } from "./common.js";

/**
 * The Fastify + Prisma peer: the two order reads as a typical team writes them without GraphQL. Fastify routes,
 * stock Prisma (the project's generated client on @prisma/adapter-pg, without the service's named statements or
 * generic planning), and per request: the bearer token verified with jose against the API's JWKS
 * (`createRemoteJWKSet`, keys cached by jose; every request verifies its signature), the `orders:read` scope, the
 * grant read with `findFirst` (ACTIVE, on the token's store, its Application ACTIVE, both in the token's
 * environment), then `findMany`/`findFirst` with `include`, mapped to the façade's JSON. No rate limiting, request
 * logs or metrics. Answers the façade's bodies, problem details included.
 *
 * Environment: DATABASE_URL, DB_POOL_SIZE, API_URL (for the JWKS), ISSUER (the tokens' `iss`, the problems' base URL).
 */

const issuer = process.env.ISSUER ?? "";
const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 10) }) });
const jwks = createRemoteJWKSet(new URL(`${process.env.API_URL}/.well-known/jwks.json`));

async function storeOf(authorization: string | undefined): Promise<string> {
  const token = bearer(authorization);
  if (token instanceof ApiError) throw token;
  const claims = await jwtVerify(token, jwks, { ...TOKEN_CHECKS, issuer }).then(
    ({ payload }) => orderReader(payload),
    () => INVALID_TOKEN,
  );
  if (claims instanceof ApiError) throw claims;
  const grant = await prisma.grant.findFirst({
    where: {
      status: "ACTIVE",
      application: { clientId: claims.clientId, status: "ACTIVE", environment: claims.environment },
      store: { code: claims.storeCode, environment: claims.environment },
    },
    select: { storeId: true },
  });
  if (!grant) throw NO_GRANT;
  return grant.storeId;
}

const app = Fastify({ logger: false });

app.setErrorHandler((err, req, reply) => {
  if (!(err instanceof ApiError)) {
    process.stderr.write(`baseline-fastify: ${err instanceof Error ? err.stack : String(err)}\n`);
    return reply.code(500).send({ code: "INTERNAL_SERVER_ERROR" });
  }
  const p = problemText(err, issuer, req.url.split("?")[0], req.headers["x-request-id"]);
  return reply.code(p.status).type("application/problem+json").send(p.text);
});

app.get<{ Querystring: Record<string, string> }>("/public/v1/orders", async (req) => {
  const storeId = await storeOf(req.headers.authorization);
  const limit = Number(req.query.limit ?? 20);
  if (Object.keys(req.query).some((k) => k !== "limit") || !Number.isInteger(limit) || limit < 1 || limit > 100) throw NOT_SERVED;
  const orders = await prisma.order.findMany({ where: { storeId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit + 1, include: LIST_INCLUDE });
  return pageBody(orders, limit);
});

app.get<{ Params: { id: string } }>("/public/v1/orders/:id", async (req) => {
  const storeId = await storeOf(req.headers.authorization);
  const { id } = req.params;
  if (!isUuid(id)) throw NOT_SERVED;
  const order = await prisma.order.findFirst({
    where: { id, storeId },
    include: DETAIL_INCLUDE,
  });
  if (!order) throw notFound("order", id);
  return orderBody(order);
});

const address = await app.listen({ port: 0, host: "127.0.0.1" });
process.stdout.write(`${JSON.stringify({ msg: "listening", name: "baseline-fastify-prisma", port: Number(new URL(address).port) })}\n`);
process.on("SIGTERM", () => {
  void app
    .close()
    .then(() => prisma.$disconnect())
    .finally(() => process.exit(0));
});
