#!/bin/sh
# Prepares another commit's build for `npm run bench -- --only reads,writes,throughput --before <dir>`: a worktree
# of it with its dependencies, its generated Prisma client and its bundle (dist/cli/start.mjs).
#
#   test/bench/prepare-before.sh <commit> [dir, default /tmp/before]
#
# node_modules is a link to this checkout's when both lock files are the same, and its own `npm ci` otherwise: a
# bundle loads its packages from its checkout, and another lock file may mean another Prisma major, whose client
# the generated code must match. Remove it afterwards with `git worktree remove --force <dir>`.
set -eu
commit=$1
dir=${2:-/tmp/before}
root=$(git rev-parse --show-toplevel)
git -C "$root" worktree add --detach "$dir" "$commit"
if git -C "$root" diff --quiet "$commit" -- package-lock.json; then
  ln -s "$root/node_modules" "$dir/node_modules"
else
  (cd "$dir" && npm ci --no-audit --no-fund)
fi
cd "$dir"
npm run generate
node scripts/build.mjs
