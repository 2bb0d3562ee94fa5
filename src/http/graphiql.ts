import type { GraphiQLOptions } from "graphql-yoga";

/**
 * GraphiQL asks for the schema once, as it opens: before anyone has typed a key into its headers editor, so it
 * showed a 401 and "Error fetching schema" until a manual refetch. This script, run before GraphiQL, holds a schema
 * request that carries no credential (it is never sent, so no error is shown), and asks GraphiQL to fetch the
 * schema again (its own Shift+Ctrl+R) once the headers editor holds an Authorization header that looks like one,
 * a moment after the typing stops. GraphiQL has no option for either; `onEditHeaders` is its prop, passed through.
 */
const HOLD_SCHEMA_UNTIL_CREDENTIAL = `
function renderGraphiQLWhenCredentialSet(root, options) {
  var credential = function (value) { return typeof value === "string" && /^Bearer\\s+[^\\s<>]+$/i.test(value.trim()); };
  var send = window.fetch.bind(window);
  window.fetch = function (input, init) {
    var body = init && typeof init.body === "string" ? init.body : "";
    if (body.indexOf("IntrospectionQuery") >= 0 && !credential(new Headers(init.headers).get("authorization"))) return new Promise(function () {});
    return send(input, init);
  };
  var asked = null;
  var timer = null;
  options.onEditHeaders = function (text) {
    clearTimeout(timer);
    timer = setTimeout(function () {
      var headers;
      try { headers = JSON.parse(text || "{}"); } catch (e) { return; }
      var value = headers && (headers.Authorization || headers.authorization);
      if (!credential(value) || value === asked) return;
      asked = value;
      window.dispatchEvent(new KeyboardEvent("keydown", { key: "R", ctrlKey: true, shiftKey: true }));
    }, 400);
  };
  YogaGraphiQL.renderYogaGraphiQL(root, options);
}
`;

/**
 * Yoga's own GraphiQL page loads its scripts from a CDN, a blank page without internet access. This one, from
 * @graphql-yoga/render-graphiql, inlines scripts, styles and editor workers (about 9 MB), so the page requests
 * nothing but /graphql. It is imported on the first GraphiQL request and rendered once: a process that never
 * serves it does not hold it in memory.
 */
export function graphiqlRenderer(): (options: GraphiQLOptions) => Promise<string> {
  let page: Promise<string> | undefined;
  return (options) => {
    page ??= import("@graphql-yoga/render-graphiql").then(({ renderGraphiQL }) => {
      const html = renderGraphiQL(options);
      // The page's own call, after the inlined bundle.
      const at = html.lastIndexOf("YogaGraphiQL.renderYogaGraphiQL(");
      if (at < 0) throw new Error("GraphiQL's page no longer calls YogaGraphiQL.renderYogaGraphiQL: update src/http/graphiql.ts");
      return `${html.slice(0, at)}${HOLD_SCHEMA_UNTIL_CREDENTIAL};renderGraphiQLWhenCredentialSet(${html.slice(at + "YogaGraphiQL.renderYogaGraphiQL(".length)}`;
    });
    return page;
  };
}
