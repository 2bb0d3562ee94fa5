// Prisma 7: the CLI's settings. The connection URL lives here, not in schema.prisma; the client gets its connection
// from the @prisma/adapter-pg adapter that src/platform/db/prisma.ts passes to PrismaClient.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost/unused" },
});
