import { FIRST_API_VERSION } from "../../src/platform/versions.js";
import { readFileSync } from "node:fs";
import pg from "pg";
import { envelopeBody } from "../../src/modules/webhooks/message.js";
import type { JsonSchema } from "../../src/platform/json.js";
import { defineBody, type OperationInput } from "../../src/platform/validate.js";
import { ApiError } from "../../src/platform/errors.js";

/**
 * Every event a test file wrote, checked against what the service publishes: the webhook body (envelope and
 * data) of its type in the checked-in schema/openapi.json, built by the code that builds delivered bodies.
 * Test databases run it before they are dropped (./database.ts), so a test that makes the service emit an event
 * its published schema does not describe fails, whichever test it is.
 */

interface PublishedDocument {
  webhooks: Record<string, { post: { requestBody: { content: { "application/json": { schema: { $ref: string } } } } } }>;
  components: { schemas: Record<string, JsonSchema> };
}

const published: PublishedDocument = JSON.parse(readFileSync(new URL("../../schema/openapi.json", import.meta.url), "utf8"));
const validators = new Map<string, OperationInput>();

function validatorFor(type: string): OperationInput | null {
  const webhook = Object.hasOwn(published.webhooks, type) ? published.webhooks[type] : null;
  if (!webhook) return null;
  let validate = validators.get(type);
  if (!validate) {
    // The body schema is a $ref to components/schemas; the event schemas hold no further references.
    const name = webhook.post.requestBody.content["application/json"].schema.$ref.replace("#/components/schemas/", "");
    validate = defineBody(published.components.schemas[name]);
    validators.set(type, validate);
  }
  return validate;
}

/** One line per event in the database whose webhook body departs from its published schema. */
export async function unpublishedEvents(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; type: string; data: unknown; createdAt: Date; sequence: number; code: string }>(
      `select e.id, e.type, e.data, e."createdAt", e.sequence::float8 as sequence, s.code from "Event" e join "Store" s on s.id = e."storeId" order by e."createdAt"`,
    );
    return rows.flatMap((row) => {
      const validate = validatorFor(row.type);
      if (!validate) return [`${row.type} ${row.id}: no such event in the published webhooks`];
      try {
        validate.check(JSON.parse(envelopeBody(row, row.code, FIRST_API_VERSION)));
        return [];
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        return [`${row.type} ${row.id} ${JSON.stringify(row.data)}: ${e.detail}`];
      }
    });
  } finally {
    await client.end();
  }
}
