import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from "graphql";
import { MapperKind, mapSchema } from "@graphql-tools/utils";

/**
 * One operation's root fields, started at most `inFlight` at a time: each root field starts reads (a Prisma query
 * compiles synchronously before it is sent), and an operation of 800 aliased roots started them all in one turn,
 * holding the event loop 250 to 640 ms while every other request waited. Paced, the next root field starts when one
 * before it has finished, between turns of the event loop. Nested lists are bounded by the operation's cost.
 */
class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  async take(): Promise<void> {
    if (this.running < this.max) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** The schema /graphql runs: `schema` with its Query fields paced per operation (the context object is the operation's). */
export function pacedRootFields(schema: GraphQLSchema, inFlight: number): GraphQLSchema {
  const slots = new WeakMap<object, Slots>();
  return mapSchema(schema, {
    [MapperKind.QUERY_ROOT_FIELD]: (field) => {
      const resolve: GraphQLFieldResolver<unknown, object> = field.resolve ?? defaultFieldResolver;
      return {
        ...field,
        resolve: async (root, args, context: object, info) => {
          let own = slots.get(context);
          if (!own) {
            own = new Slots(inFlight);
            slots.set(context, own);
          }
          await own.take();
          try {
            return await resolve(root, args, context, info);
          } finally {
            own.release();
          }
        },
      };
    },
  });
}
