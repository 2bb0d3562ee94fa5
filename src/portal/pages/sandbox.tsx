import { useEffect, useState } from "preact/hooks";
import { api, type Order } from "../api.js";
import { sandboxChoices } from "../catalog.js";
import { Json, Page, ProblemView, useAction, useLoad } from "../components.js";

function Seed() {
  const action = useAction<{ categories: number; products: number; customers: number }>();
  return (
    <section aria-labelledby="seed">
      <h2 id="seed">Catalog and customers</h2>
      <p class="muted">Fills this sandbox store with a fake catalog and customers; seeding again duplicates nothing.</p>
      <button type="button" disabled={action.busy} onClick={() => void action.run(() => api.seed())}>
        Seed
      </button>
      {action.problem && <ProblemView problem={action.problem} />}
      {action.result && (
        <p role="status">
          Seeded: {action.result.categories} categories, {action.result.products} products, {action.result.customers} customers.
        </p>
      )}
    </section>
  );
}

function CreateOrder({ scenarios }: { scenarios: string[] }) {
  const [scenario, setScenario] = useState("");
  const [notes, setNotes] = useState("");
  useEffect(() => setScenario((s) => s || scenarios[0] || ""), [scenarios]);
  const action = useAction<Order>();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(() => api.createSandboxOrder(scenario, notes.trim()));
  };
  const order = action.result;
  return (
    <section aria-labelledby="create-order">
      <h2 id="create-order">Orders</h2>
      <form onSubmit={submit} class="stack">
        <label>
          Scenario
          <select value={scenario} onChange={(e) => setScenario(e.currentTarget.value)}>
            {scenarios.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Order notes (optional)
          <textarea value={notes} onInput={(e) => setNotes(e.currentTarget.value)} rows={2} />
        </label>
        <div>
          <button type="submit" disabled={action.busy || !scenario}>
            Create order
          </button>
        </div>
      </form>
      {action.problem && <ProblemView problem={action.problem} />}
      {order && (
        <div role="status">
          <p>Order #{order.orderNumber} created.</p>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{order.status}</dd>
            <dt>Customer</dt>
            <dd>{order.customer?.name ?? "none"}</dd>
            <dt>Total</dt>
            <dd>{order.total.toFixed(2)}</dd>
            <dt>Notes</dt>
            <dd class="notes">{order.notes ?? "none"}</dd>
          </dl>
        </div>
      )}
    </section>
  );
}

function FireEvent({ types }: { types: string[] }) {
  const [type, setType] = useState("");
  useEffect(() => setType((t) => t || types[0] || ""), [types]);
  const action = useAction<unknown>();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(() => api.fireEvent(type));
  };
  return (
    <section aria-labelledby="fire-event">
      <h2 id="fire-event">Events</h2>
      <form onSubmit={submit} class="row">
        <label>
          Event type to fire
          <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {types.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={action.busy || !type}>
          Fire event
        </button>
      </form>
      {action.problem && <ProblemView problem={action.problem} />}
      {action.result !== null && (
        <div role="status">
          <p>Fired {type}: it went through the real code path, so subscribed endpoints receive it.</p>
          <Json value={action.result} label="The fired event" />
        </div>
      )}
    </section>
  );
}

/** "Sandbox" (SANDBOX tokens only): "Seed", "Create order" with a scenario, "Fire event" with a type. */
export function Sandbox() {
  const choices = useLoad(() => sandboxChoices(), []);
  return (
    <Page title="Sandbox">
      {choices.problem && <ProblemView problem={choices.problem} />}
      <Seed />
      <CreateOrder scenarios={choices.data?.scenarios ?? []} />
      <FireEvent types={choices.data?.types ?? []} />
    </Page>
  );
}
