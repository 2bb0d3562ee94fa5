// The query compiler's wasm-bindgen glue ships without types; plan-cache.ts only needs `compile`.
declare module "@prisma/client/runtime/query_compiler_bg.postgresql.mjs" {
  export class QueryCompiler {
    compile(request: string): unknown;
  }
}
