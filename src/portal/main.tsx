import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { currentSession, onSessionChange, type Session, signOut } from "./api.js";
import { Badge } from "./components.js";
import { Deliveries } from "./pages/deliveries.js";
import { Delivery } from "./pages/delivery.js";
import { Endpoint } from "./pages/endpoint.js";
import { Events } from "./pages/events.js";
import { EventTypes } from "./pages/event-types.js";
import { Exports } from "./pages/exports.js";
import { Overview } from "./pages/overview.js";
import { Sandbox } from "./pages/sandbox.js";
import { SignIn } from "./pages/sign-in.js";
import { SwitchStore } from "./pages/switch-store.js";
import { Webhooks } from "./pages/webhooks.js";
import { href, type PageName, type Route, takeLinkSecret, useRoute } from "./router.js";

/**
 * The partner portal: a client of the public REST API only (see api.ts). Preact renders it; the server serves the
 * built files from dist/portal under a strict Content-Security-Policy.
 */

const NAV: { page: PageName; label: string; sandboxOnly?: boolean }[] = [
  { page: "overview", label: "Overview" },
  { page: "webhooks", label: "Webhooks" },
  { page: "deliveries", label: "Deliveries" },
  { page: "events", label: "Events" },
  { page: "event-types", label: "Event types" },
  { page: "exports", label: "Exports" },
  { page: "sandbox", label: "Sandbox", sandboxOnly: true },
];

function useSession(): Session | null {
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSessionChange(() => setSession(currentSession())), []);
  return session;
}

/**
 * A portal link's secret opened in this tab (on load, or pasted into the open portal), until it is used or set
 * aside; the second function sets it aside.
 */
function usePortalLink(): [string | null, () => void] {
  const [link, setLink] = useState(takeLinkSecret);
  useEffect(() => {
    const opened = () => {
      const secret = takeLinkSecret();
      if (secret) setLink(secret);
    };
    window.addEventListener("hashchange", opened);
    return () => window.removeEventListener("hashchange", opened);
  }, []);
  return [link, useCallback(() => setLink(null), [])];
}

function Content({ route, session }: { route: Route; session: Session }) {
  switch (route.page) {
    case "webhooks":
      return route.id ? <Endpoint id={route.id} /> : <Webhooks />;
    case "deliveries":
      return route.id ? <Delivery id={route.id} /> : <Deliveries route={route} />;
    case "events":
      return <Events session={session} />;
    case "event-types":
      return <EventTypes />;
    case "exports":
      return <Exports session={session} />;
    case "sandbox":
      return session.environment === "SANDBOX" ? <Sandbox /> : <Overview session={session} />;
    default:
      return <Overview session={session} />;
  }
}

function App() {
  const session = useSession();
  const route = useRoute();
  const [link, setLinkAside] = usePortalLink();
  if (!session) {
    return (
      <main>
        <SignIn link={link} linkTaken={setLinkAside} />
      </main>
    );
  }
  // Signing out answers no pending portal link: the link is set aside, not opened.
  const leave = () => {
    setLinkAside();
    void signOut();
  };
  return (
    <>
      <header class="top">
        <p class="brand">Partner portal</p>
        <p class="who">
          <code>{session.tenantId}</code> <Badge value={session.environment} />
        </p>
        <nav aria-label="Portal">
          <ul>
            {NAV.filter((n) => !n.sandboxOnly || session.environment === "SANDBOX").map((n) => (
              <li key={n.page}>
                <a href={href(n.page)} aria-current={route.page === n.page ? "page" : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="sign-out" onClick={leave}>
          Sign out
        </button>
      </header>
      <main>
        {link ? <SwitchStore session={session} keep={setLinkAside} /> : <Content key={`${route.page}/${route.id ?? ""}`} route={route} session={session} />}
      </main>
      <footer class="muted">All times in the portal are UTC, those shown and those you enter.</footer>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
