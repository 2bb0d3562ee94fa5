import { builder } from "../../platform/schema/builder.js";
import { tenantOf } from "../../platform/schema/context.js";
import { LONGEST_COMMAND_MS, runCommand } from "../../platform/schema/commands.js";
import { Order } from "../orders/graphql.js";
import { seedSandboxStore, type SeedResult } from "./seed.js";
import { generateSandboxOrder, SCENARIOS } from "./scenarios.js";
import { sandboxOrderInput } from "./schemas.js";
import { jsonArgs } from "../../platform/validate.js";

/** Sandbox tooling: any valid SANDBOX token, no scope needed. */

export const SandboxScenarioEnum = builder.enumType("SandboxScenario", {
  values: Object.fromEntries(SCENARIOS.map((s) => [s.toUpperCase(), { value: s }])) as Record<
    Uppercase<(typeof SCENARIOS)[number]>,
    { value: (typeof SCENARIOS)[number] }
  >,
});

const SeedResultRef = builder.objectRef<SeedResult>("SandboxSeedResult").implement({
  fields: (t) => ({
    storeId: t.exposeID("storeId"),
    categories: t.exposeInt("categories", { description: "Categories the store now has" }),
    products: t.exposeInt("products"),
    customers: t.exposeInt("customers"),
  }),
});

builder.mutationFields((t) => ({
  sandboxSeed: t.field({
    type: SeedResultRef,
    description: "Fills the token's sandbox store with a fixed fake catalog and customers; repeating it duplicates nothing.",
    authScopes: { sandbox: true },
    resolve: (_root, _args, ctx) => runCommand(ctx, (tx) => seedSandboxStore(tx, tenantOf(ctx).storeId)),
  }),
  sandboxCreateOrder: t.prismaField({
    type: Order,
    description: "Generates an order of a scenario through the real order path, so webhooks fire.",
    authScopes: { sandbox: true },
    args: { scenario: t.arg({ type: SandboxScenarioEnum, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { storeId } = tenantOf(ctx);
      sandboxOrderInput.check(jsonArgs({ scenario: args.scenario }));
      return runCommand(
        ctx,
        async (tx) => {
          const { id } = await generateSandboxOrder(tx, storeId, args.scenario);
          return tx.order.findUniqueOrThrow({ ...query, where: { id } });
        },
        { timeout: LONGEST_COMMAND_MS },
      );
    },
  }),
}));
