import type { InputFieldMap, InputShapeFromFields, ObjectRef, Resolver, ShapeFromTypeParam, TypeParam } from "@pothos/core";
import type { PrismaFieldResolver, PrismaModelTypes, PrismaObjectRef } from "@pothos/plugin-prisma";
import type { Scope } from "../auth/scopes.js";
import type { ArgsInput } from "../validate.js";
import { builder } from "./builder.js";
import { STORE_READ, storeIdOf, tenantOf, type Context } from "./context.js";

/**
 * A store-scoped read is answered at two doors with one meaning: Query.<name> reads the partner token's store,
 * Store.<name> the parent's (an administrator's way in). Each is declared once here and registered at both, so the
 * two cannot drift; only where the store id comes from and who may ask differ.
 */

type Types = (typeof builder)["$inferSchemaTypes"];

/** The arguments of a read of one record: its id. */
export const byIdArgs = builder.args((t) => ({ id: t.id({ required: true }) }));

interface StoreFieldBase<Args extends InputFieldMap> {
  description: string;
  /** The partner scope of the Query field; Store's also admits administrators (STORE_READ). */
  scope: Scope;
  args: Args;
  input?: ArgsInput<InputShapeFromFields<Args>>;
}

interface StoreFieldSpec<Type extends TypeParam<Types>, Args extends InputFieldMap, ResolveReturnShape> extends StoreFieldBase<Args> {
  type: Type;
  /** Resolves the field for the store whose id it is given. */
  resolve: Resolver<string, InputShapeFromFields<Args>, Context, ShapeFromTypeParam<Types, Type, false>, ResolveReturnShape>;
}

/** A store-scoped field resolved from its arguments (a page type, say): `t.field` at both doors. */
export function storeField<Type extends TypeParam<Types>, Args extends InputFieldMap, ResolveReturnShape>(
  name: string,
  spec: StoreFieldSpec<Type, Args, ResolveReturnShape>,
): void {
  const { type, description, scope, args, input, resolve } = spec;
  builder.queryField(name, (t) =>
    t.field<Type, unknown, ResolveReturnShape, false, Args>({
      type,
      description,
      authScopes: { scope },
      args,
      input,
      resolve: (_root, fieldArgs, ctx, info) => resolve(tenantOf(ctx).storeId, fieldArgs, ctx, info),
    }),
  );
  builder.prismaObjectField("Store", name, (t) =>
    t.field<Type, unknown, ResolveReturnShape, false, Args>({
      type,
      description,
      authScopes: STORE_READ(scope),
      args,
      input,
      resolve: (store, fieldArgs, ctx, info) => resolve(storeIdOf(ctx, store), fieldArgs, ctx, info),
    }),
  );
}

type PrismaTypeParam = PrismaObjectRef<Types, PrismaModelTypes> | [PrismaObjectRef<Types, PrismaModelTypes>];

/** The Prisma model of a prismaField's type, whose include and select its `query` holds. */
type ModelOf<Param extends PrismaTypeParam> = Param extends [PrismaObjectRef<Types, infer Model>]
  ? Model
  : Param extends PrismaObjectRef<Types, infer Model>
    ? Model
    : never;

interface StorePrismaFieldSpec<
  Param extends PrismaTypeParam,
  Model extends PrismaModelTypes,
  Type extends TypeParam<Types>,
  Args extends InputFieldMap,
  ResolveReturnShape,
> extends StoreFieldBase<Args> {
  type: Param;
  /** Resolves the field for the store whose id it is given, loading what the selection asks for (`query`). */
  resolve: PrismaFieldResolver<Types, Model, string, Type, Args, false, ResolveReturnShape>;
}

/** A store-scoped field that loads Prisma rows with the selection's `query`: `t.prismaField` at both doors. */
export function storePrismaField<
  Param extends PrismaTypeParam,
  Args extends InputFieldMap,
  ResolveReturnShape,
  Model extends PrismaModelTypes = ModelOf<Param>,
  Type extends Param extends [unknown] ? [ObjectRef<Types, Model["Shape"]>] : ObjectRef<Types, Model["Shape"]> = Param extends [unknown]
    ? [ObjectRef<Types, Model["Shape"]>]
    : ObjectRef<Types, Model["Shape"]>,
>(name: string, spec: StorePrismaFieldSpec<Param, Model, Type, Args, ResolveReturnShape>): void {
  const { type, description, scope, args, input, resolve } = spec;
  builder.queryField(name, (t) =>
    t.prismaField<Args, Param, false, unknown, ResolveReturnShape, Type, Model>({
      type,
      description,
      authScopes: { scope },
      args,
      input,
      resolve: (query, _root, fieldArgs, ctx, info) => resolve(query, tenantOf(ctx).storeId, fieldArgs, ctx, info),
    }),
  );
  builder.prismaObjectField("Store", name, (t) =>
    t.prismaField<Args, Param, false, unknown, ResolveReturnShape, Type, Model>({
      type,
      description,
      authScopes: STORE_READ(scope),
      args,
      input,
      resolve: (query, store, fieldArgs, ctx, info) => resolve(query, storeIdOf(ctx, store), fieldArgs, ctx, info),
    }),
  );
}
