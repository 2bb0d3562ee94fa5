import { versionList } from "./render.js";

/** docs/changelog.md: every version, newest first, with what it changed, printed from the version changes. */
export function printChangelog(): string {
  const sections = versionList({}).map(({ version, releasedAt, changes }) =>
    [`## ${version}`, "", `Released ${releasedAt}.`, "", ...changes.map((change) => `- ${change}`)].join("\n"),
  );
  return [
    "# API changelog",
    "",
    "Printed by `npm run print-schema` from the version changes in src/modules/versions/; do not edit by hand.",
    'Each Application is pinned to one version (docs/api.md, "Versions"); a later version changes only what is listed here.',
    "Which versions are deprecated, and their sunset dates, is at `GET /public/v1/versions`.",
    "",
    ...sections.flatMap((section) => [section, ""]),
  ].join("\n");
}
