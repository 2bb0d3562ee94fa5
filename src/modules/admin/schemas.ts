import { defineBody } from "../../platform/validate.js";

/** createPortalLink's input; the upper bound of ttlMinutes is a setting (PORTAL_LINK_MAX_TTL_MINUTES), checked by the command. */
export const createPortalLinkInput = defineBody({
  type: "object",
  required: ["clientId", "storeId"],
  additionalProperties: false,
  properties: {
    clientId: { type: "string", minLength: 1, maxLength: 200 },
    storeId: { type: "string", minLength: 1, maxLength: 200, description: "Store id (uuid) or code" },
    ttlMinutes: { type: "integer", minimum: 1, description: "How long the link may be used, in minutes (default 60)" },
  },
});

/** The body of POST /partner/auth/portal-link: the secret from the link's fragment. */
export const exchangePortalLinkInput = defineBody({
  type: "object",
  required: ["link_secret"],
  additionalProperties: false,
  properties: {
    link_secret: { type: "string", minLength: 1, maxLength: 200, description: "The `link_secret` of the portal link's fragment (`/portal#link_secret=…`)" },
  },
});
