import { useEffect, useState } from "preact/hooks";

/**
 * Pages live in the URL fragment (`#/webhooks/<id>?…`): the server serves one page at /portal, and the fragment never
 * reaches it. A fragment holding a portal link (`#link_secret=…`) is not a route: `takeLinkSecret` takes it.
 */

export const PAGES = ["overview", "webhooks", "deliveries", "events", "event-types", "exports", "sandbox"] as const;
export type PageName = (typeof PAGES)[number];

export interface Route {
  page: PageName;
  id: string | null;
  params: URLSearchParams;
}

function isPage(value: string): value is PageName {
  return PAGES.some((p) => p === value);
}

export function parseRoute(hash: string): Route {
  const [path, query = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  const [page, id] = path.split("/");
  return { page: isPage(page) ? page : "overview", id: id ? decodeURIComponent(id) : null, params: new URLSearchParams(query) };
}

export function href(page: PageName, id?: string | null, params?: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {})) if (value) query.set(name, value);
  const text = query.toString();
  return `#/${page}${id ? `/${encodeURIComponent(id)}` : ""}${text ? `?${text}` : ""}`;
}

export function navigate(to: string): void {
  window.location.hash = to.slice(1);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return route;
}

/** The portal link's secret in the address, if any, taken out of it at once so it stays in no history entry or bookmark. */
export function takeLinkSecret(): string | null {
  const secret = new URLSearchParams(window.location.hash.replace(/^#/, "")).get("link_secret");
  if (secret) window.history.replaceState(null, "", window.location.pathname);
  return secret;
}
