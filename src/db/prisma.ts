import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.js";

export { Prisma } from "../generated/prisma/client.js";
export type * from "../generated/prisma/client.js";
export type Db = PrismaClient;
/** A client or an interactive-transaction client: what every write helper takes. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

export function createPrisma(connectionString: string, poolSize: number): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max: poolSize }) });
}
