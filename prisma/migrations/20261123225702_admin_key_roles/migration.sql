-- CreateEnum
CREATE TYPE "AdminRole" AS ENUM ('ADMIN', 'SUPPORT', 'VIEWER');

-- AlterTable: keys made before roles could do everything, so they become ADMIN; new keys always name a role.
ALTER TABLE "AdminKey" ADD COLUMN "role" "AdminRole" NOT NULL DEFAULT 'ADMIN';
ALTER TABLE "AdminKey" ALTER COLUMN "role" DROP DEFAULT;
