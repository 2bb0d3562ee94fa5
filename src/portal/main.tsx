import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { currentSession, onSessionChange, type Session, signOut } from "./api.js";
import { Badge } from "./components.js";
import { Deliveries } from "./pages/deliveries.js";
import { Delivery } from "./pages/delivery.js";
import { Endpoint } from "./pages/endpoint.js";
import { Events } from "./pages/events.js";
import { EventTypes } from "./pages/event-types.js";
import { Overview } from "./pages/overview.js";
import { Sandbox } from "./pages/sandbox.js";
import { SignIn } from "./pages/sign-in.js";
import { Webhooks } from "./pages/webhooks.js";
import { href, type PageName, type Route, useRoute } from "./router.js";

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
  { page: "sandbox", label: "Sandbox", sandboxOnly: true },
];

function useSession(): Session | null {
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSessionChange(() => setSession(currentSession())), []);
  return session;
}

function Content({ route, session }: { route: Route; session: Session }) {
  switch (route.page) {
    case "webhooks":
      return route.id ? <Endpoint id={route.id} /> : <Webhooks />;
    case "deliveries":
      return route.id ? <Delivery id={route.id} /> : <Deliveries route={route} />;
    case "events":
      return <Events />;
    case "event-types":
      return <EventTypes />;
    case "sandbox":
      return session.environment === "SANDBOX" ? <Sandbox /> : <Overview session={session} />;
    default:
      return <Overview session={session} />;
  }
}

function App() {
  const session = useSession();
  const route = useRoute();
  if (!session) {
    return (
      <main>
        <SignIn />
      </main>
    );
  }
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
        <button type="button" class="sign-out" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main>
        <Content key={`${route.page}/${route.id ?? ""}`} route={route} session={session} />
      </main>
    </>
  );
}

const holdsLink = () => new URLSearchParams(window.location.hash.replace(/^#/, "")).has("link_secret");
// Opening a portal link signs in afresh, whatever session this tab held; one pasted into an open portal loads it anew.
if (holdsLink()) signOut();
window.addEventListener("hashchange", () => {
  if (holdsLink()) window.location.reload();
});

const root = document.getElementById("app");
if (root) render(<App />, root);
