import { one, STORE_CODE, STORE_ID, type OperationExamples } from "../../platform/examples.js";
import type { storeRoutes } from "./routes.js";

type StoreOperationId = (typeof storeRoutes)[number]["operationId"];

const STORE = {
  id: STORE_ID,
  code: STORE_CODE,
  name: "Bella Napoli Pizzaria",
  slug: "bella-napoli-pizzaria",
  logo: "https://images.example.com/stores/bella-napoli.png",
  phone: "+55 11 3456-7890",
  isActive: true,
  status: "OPEN",
  address: { street: "Rua dos Pinheiros", number: "870", neighborhood: "Pinheiros", city: "São Paulo", state: "SP", postalCode: "05422-001", complement: null },
  openingHours: [
    { dayOfWeek: 2, opens: "18:00", closes: "23:30" },
    { dayOfWeek: 5, opens: "18:00", closes: "00:30" },
  ],
  publicSettings: { currency: "BRL", timezone: "America/Sao_Paulo", acceptsDelivery: true, acceptsPickup: true, minimumOrder: 30 },
};

export const storeExamples = {
  getStore: {
    response: one("An open pizzeria", STORE),
    problem: {
      summary: "No bearer token",
      code: "UNAUTHORIZED",
      detail: "This route needs an access token: send Authorization: Bearer <access_token> (get one at POST /partner/auth/token).",
      instance: "/public/v1/store",
    },
  },
} satisfies Record<StoreOperationId, OperationExamples>;
