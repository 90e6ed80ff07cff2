// The part of js-yaml's API the dashboard uses; the package ships no types.
declare module "js-yaml" {
  /** A set of YAML tags a document is read with. */
  export interface Schema {
    readonly __schema: unique symbol;
  }
  /** YAML 1.2's core schema: null, booleans, numbers and strings; no dates. */
  export const CORE_SCHEMA: Schema;
  /** load reads one YAML document; it throws a YAMLException on a syntax error. */
  export function load(text: string, options?: { schema?: Schema; filename?: string; json?: boolean }): unknown;
}
