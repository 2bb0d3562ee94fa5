import { builder } from "../../platform/schema/builder.js";
import { tenantOf } from "../../platform/schema/context.js";
import { LONGEST_COMMAND_MS, runCommand } from "../../platform/schema/commands.js";
import { NewCustomerInput } from "../customers/graphql.js";
import { findOrder, Order, OrderItemInput, OrderStatusEnum } from "../orders/graphql.js";
import { seedSandboxStore, type SeedResult } from "./seed.js";
import { generateSandboxOrder, type SandboxOverrides, SCENARIOS } from "./scenarios.js";
import { SANDBOX_EVENT_BODY, SandboxOrderSchema } from "./schemas.js";
import { DEFAULT_STEP_SECONDS, MAX_STEP_SECONDS } from "./simulate.js";
import { StoreEvent } from "../events/graphql.js";
import { type FiredEvent, fireSandboxEvent, isSandboxEventType } from "./fire.js";
import type { CatalogUpdated } from "../catalog/events.js";
import { insufficientScope } from "../../platform/errors.js";
import { EVENT_SCOPES } from "../events/types.js";

/** Sandbox tooling: any valid SANDBOX token, no write scope needed; firing an event needs the read scope of its type. */

/** A scenario's value is REST's spelling (`pickup`), its name GraphQL's (`PICKUP`): the REST binding maps one to the other. */
export const SandboxScenarioEnum = builder.enumType("SandboxScenario", {
  values: Object.fromEntries(SCENARIOS.map((s) => [s.toUpperCase(), { value: s }])) as Record<
    Uppercase<(typeof SCENARIOS)[number]>,
    { value: (typeof SCENARIOS)[number] }
  >,
});

const SandboxOrderOverrides = builder.inputType("SandboxOrderOverrides", {
  description: "Values that replace the scenario's, checked as createOrder checks them. Extension to the contract.",
  fields: (t) => ({
    items: t.field({ type: [OrderItemInput], description: "Prices still come from the catalog" }),
    customer: t.field({ type: NewCustomerInput, description: "Creates a customer (customer.created)" }),
    deliveryFee: t.float({ description: "Replaces the store's delivery fee, on a PICKUP order too" }),
    discount: t.float({ description: "Replaces the scenario's discount; a total below zero is refused" }),
    notes: t.string(),
    scheduledFor: t.field({ type: "DateTime" }),
  }),
});

const SandboxSimulation = builder.inputType("SandboxSimulation", {
  description:
    "Moves the order on its own, one status per step, through the same status change as updateOrderStatus (its events and webhooks), " +
    "along its full path, stopping at `until`. A status the order does not reach is UNPROCESSABLE_ENTITY and creates nothing; any " +
    "change to the order by someone else ends the simulation. Extension to the contract.",
  fields: (t) => ({
    until: t.field({ type: OrderStatusEnum, required: true, description: "The status the simulation stops at" }),
    stepSeconds: t.int({
      required: true,
      defaultValue: DEFAULT_STEP_SECONDS,
      description: `Seconds between steps, at least, 1 to ${MAX_STEP_SECONDS}; the first step comes this long after the order is created`,
    }),
  }),
});

const SeedResultRef = builder.objectRef<SeedResult>("SandboxSeedResult").implement({
  fields: (t) => ({
    storeId: t.exposeID("storeId"),
    categories: t.exposeInt("categories", { description: "Categories the store now has" }),
    products: t.exposeInt("products"),
    customers: t.exposeInt("customers"),
  }),
});

const CatalogChangeRef = builder.objectRef<CatalogUpdated>("SandboxCatalogChange").implement({
  description: "A catalog change recorded for aggregation: its catalog.updated follows when the window closes.",
  fields: (t) => ({
    action: t.exposeString("action"),
    itemId: t.exposeString("itemId"),
    itemType: t.exposeString("itemType"),
  }),
});

const FiredEventRef = builder.objectRef<FiredEvent>("SandboxFiredEvent").implement({
  description: "The event fired, or for catalog.updated (aggregated over a window) the change that will produce it.",
  fields: (t) => ({
    event: t.field({ type: StoreEvent, nullable: true, resolve: (f) => f.event }),
    catalogChange: t.field({ type: CatalogChangeRef, nullable: true, resolve: (f) => f.catalogChange }),
  }),
});

builder.mutationFields((t) => ({
  sandboxFireEvent: t.field({
    type: FiredEventRef,
    description:
      "Fires an event of any subscribable type on the sandbox store through the real code path, so webhooks fire. Needs the read scope of the type (the one receiving it needs): otherwise INSUFFICIENT_SCOPE.",
    authScopes: { sandbox: true },
    args: { type: t.arg.string({ required: true }) },
    input: { object: { schema: SANDBOX_EVENT_BODY } },
    resolve: (_root, args, ctx) => {
      const { storeId, scopes } = tenantOf(ctx);
      // The field's input admits only event types; this narrows the string for tsc.
      if (!isSandboxEventType(args.type)) throw new Error(`unchecked event type ${args.type}`);
      const type = args.type;
      // What a token could not receive it may not fire: the event carries what that scope guards (a customer's contacts).
      const scope = EVENT_SCOPES[type];
      if (!scopes.has(scope)) throw insufficientScope(scope, `Firing ${type}`);
      return runCommand(ctx, (tx) => fireSandboxEvent(tx, storeId, type, ctx.services.config.CATALOG_EVENT_WINDOW_MS), { timeout: LONGEST_COMMAND_MS });
    },
  }),
  sandboxSeed: t.field({
    type: SeedResultRef,
    description: "Fills the token's sandbox store with a fixed fake catalog and customers; repeating it duplicates nothing.",
    authScopes: { sandbox: true },
    resolve: (_root, _args, ctx) => runCommand(ctx, (tx) => seedSandboxStore(tx, tenantOf(ctx).storeId)),
  }),
  sandboxCreateOrder: t.prismaField({
    type: Order,
    description: "Generates an order of a scenario through the real order path, so webhooks fire; with `simulate`, the order then moves on its own.",
    authScopes: { sandbox: true },
    args: {
      scenario: t.arg({ type: SandboxScenarioEnum, required: true }),
      overrides: t.arg({ type: SandboxOrderOverrides }),
      simulate: t.arg({ type: SandboxSimulation }),
    },
    // The scenario's value is REST's spelling (`pickup`), so the one schema checks it on both doors.
    input: { object: { schema: SandboxOrderSchema } },
    resolve: async (query, _root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      const given = args.overrides ?? {};
      const overrides: SandboxOverrides = {
        ...given,
        items: given.items?.map((i) => ({ ...i, productId: String(i.productId) })),
      };
      return runCommand(
        ctx,
        async (tx) => {
          const { id } = await generateSandboxOrder(tx, storeId, args.scenario, overrides, args.simulate ?? null);
          return findOrder(tx, storeId, id, query);
        },
        { timeout: LONGEST_COMMAND_MS },
      );
    },
  }),
}));
