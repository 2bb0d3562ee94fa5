import { defineRoute } from "../../platform/route.js";
import { StoreSchema } from "./schemas.js";

interface StoreData {
  store: Record<string, unknown>;
}

export const storeRoutes = [
  defineRoute<StoreData>({
    operationId: "getStore",
    method: "GET",
    path: "/public/v1/store",
    tag: "Store",
    summary: "The token's store profile",
    scope: "merchant:read",
    document: `query getStore { store { id code name slug logo phone isActive status
      address { street number neighborhood city state postalCode complement }
      openingHours { dayOfWeek opens closes } publicSettings } }`,
    variables: () => ({}),
    respond: (data) => ({ body: data.store }),
    status: 200,
    response: { description: "The store", schema: StoreSchema },
  }),
];
