import { type DocumentNode, GraphQLError, parse } from "graphql";
import type { Plugin } from "graphql-yoga";
import { LRUCache } from "lru-cache";
import { ERROR_CATALOG } from "../platform/errors.js";

export interface DocumentLimits {
  /** Longest document text accepted, in bytes (GRAPHQL_MAX_DOCUMENT_BYTES); longer is 413 before parsing. */
  maxBytes: number;
  /** Tokens the parser reads before it gives up (GRAPHQL_MAX_TOKENS). */
  maxTokens: number;
  /** Deepest nesting of braces, brackets and parentheses the parser is given; deeper is 400 before parsing. */
  maxNesting: number;
}

/**
 * A parsed document takes about 100 times its text in memory (every token stays linked from its locations:
 * measured 76x for a document of 1,500 aliases and 118x for a typical 170-byte query).
 */
const PARSED_BYTES_PER_CHAR = 100;

/**
 * Parsed documents kept for reuse, by text, in an LRU cache bounded in estimated bytes
 * (GRAPHQL_DOCUMENT_CACHE_BYTES); /metrics reports how many and how large.
 */
export class KeptDocuments {
  readonly cache: LRUCache<string, DocumentNode>;

  constructor(readonly maxBytes: number) {
    this.cache = new LRUCache({ maxSize: maxBytes, sizeCalculation: (_doc, text) => KeptDocuments.sizeOf(text) });
  }

  static sizeOf(text: string): number {
    return Math.max(1, text.length * PARSED_BYTES_PER_CHAR);
  }

  get count(): number {
    return this.cache.size;
  }

  get bytes(): number {
    return this.cache.calculatedSize;
  }
}

function refused(code: "PAYLOAD_TOO_LARGE" | "INVALID_REQUEST", message: string): GraphQLError {
  const status = ERROR_CATALOG[code].status;
  return new GraphQLError(message, { extensions: { code, status, http: { status } } });
}

/**
 * The deepest nesting of `{`, `[` and `(` in a document's text, strings, block strings and comments skipped: one
 * pass that recurses on nothing, so a document of thousands of nested brackets is refused before graphql-js's
 * recursive parser could overflow the stack on it.
 */
export function documentNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "#") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '"' && text.startsWith('"""', i)) {
      // A block string ends at the first """ not escaped as \""".
      let end = text.indexOf('"""', i + 3);
      while (end > 0 && text[end - 1] === "\\") end = text.indexOf('"""', end + 3);
      i = end < 0 ? text.length : end + 3;
    } else if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"' && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
      i++;
    } else {
      if (c === "{" || c === "[" || c === "(") {
        depth++;
        if (depth > deepest) deepest = depth;
      } else if (c === "}" || c === "]" || c === ")") {
        depth--;
      }
      i++;
    }
  }
  return deepest;
}

/**
 * Bounds what one document can cost before anything runs, and what documents cost while they are kept:
 * - its text's size (413) and nesting (400) are checked before it is parsed, and parsing stops after `maxTokens`;
 * - parsed documents are kept for reuse in an LRU cache bounded in estimated bytes, and only once they passed
 *   validation and every limit checked when the operation starts (cost, stored text): a refused or unparsable
 *   document is never kept, so distinct documents that are refused one after the other cannot fill the memory.
 *   Validation is remembered with the document (and so forgotten with it), per set of validation rules (the
 *   introspection rule differs between administrators and partners).
 * Yoga's own cache, replaced by this one, kept 1,024 documents and 1,024 parse errors by text whatever their size.
 */
export function useDocumentLimits(limits: DocumentLimits, documents: KeptDocuments): Plugin {
  const kept = documents.cache;
  /** Documents parsed for a request and not yet kept, with their text. */
  const parsed = new WeakMap<DocumentNode, string>();
  /** The validation rule sets each document passed. */
  const valid = new WeakMap<DocumentNode, Set<string>>();
  const keep = (document: DocumentNode) => {
    const text = parsed.get(document);
    if (text === undefined) return;
    parsed.delete(document);
    if (KeptDocuments.sizeOf(text) <= documents.maxBytes) kept.set(text, document);
  };
  return {
    onParams: ({ params }) => {
      const text = params.query ?? "";
      const bytes = Buffer.byteLength(text);
      if (bytes > limits.maxBytes) {
        throw refused("PAYLOAD_TOO_LARGE", `The GraphQL document is ${bytes} bytes; at most ${limits.maxBytes} are accepted (GRAPHQL_MAX_DOCUMENT_BYTES).`);
      }
      if (documentNesting(text) > limits.maxNesting) {
        throw refused("INVALID_REQUEST", `The GraphQL document nests braces, brackets or parentheses deeper than ${limits.maxNesting} levels.`);
      }
    },
    onParse: ({ params, setParsedDocument, setParseFn }) => {
      const text = params.source.toString();
      const hit = kept.get(text);
      if (hit) {
        setParsedDocument(hit);
        return;
      }
      setParseFn((source, options) => parse(source, { ...options, maxTokens: limits.maxTokens }));
      return ({ result }) => {
        if (result && !(result instanceof Error)) parsed.set(result, text);
      };
    },
    onValidate: ({ params: { documentAST, rules }, setResult }) => {
      const ruleSet = rules?.map((rule: { name: string }) => rule.name).join(",") ?? "";
      if (valid.get(documentAST)?.has(ruleSet)) {
        setResult([]);
        return;
      }
      return ({ result }) => {
        if (result.length > 0) return;
        const sets = valid.get(documentAST) ?? new Set<string>();
        sets.add(ruleSet);
        valid.set(documentAST, sets);
      };
    },
    // Placed after every plugin that may refuse the operation when it starts: reached only by accepted ones.
    onExecute: ({ args }) => keep(args.document),
    onSubscribe: ({ args }) => keep(args.document),
  };
}
