import { defineRoute } from "../../platform/route.js";
import { graphql } from "../../platform/schema/typed.js";

export const AddressFragment = graphql(`fragment Address on Address { street number neighborhood city state postalCode complement }`);

const StoreFragment = graphql(
  `fragment Store on Store {
    id code name slug logo phone isActive status
    address { ...Address }
    openingHours { dayOfWeek opens closes } publicSettings }`,
  [AddressFragment],
);

export const storeRoutes = [
  defineRoute({
    operationId: "getStore",
    method: "GET",
    path: "/public/v1/store",
    tag: "Store",
    summary: "The token's store profile",
    document: graphql(`query getStore { store { ...Store } }`, [StoreFragment]),
    respond: (data) => ({ body: data.store }),
    status: 200,
    response: { description: "The store" },
  }),
];
