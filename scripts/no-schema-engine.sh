#!/bin/sh
# Stands in for Prisma's native schema engine, which cannot be downloaded here (see scripts/generate.mjs).
echo "Prisma's native schema engine is not installed: write migrations with npm run migration:new" >&2
exit 1
