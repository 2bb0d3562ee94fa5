-- CreateTable
CREATE TABLE "WriteMark" (
    "writer" TEXT NOT NULL,
    "lsn" BIGINT NOT NULL,

    CONSTRAINT "WriteMark_pkey" PRIMARY KEY ("writer")
);

