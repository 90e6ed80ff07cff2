// The API reference's model: api/openapi.yaml, as the server serves it at
// /api/v1/openapi.yaml, read into what the reference page shows. Operations
// are grouped by their first tag in the order of the document's tags;
// references ($ref) are resolved, allOf is merged into one object, and a
// schema becomes a tree of fields. Only the parts of OpenAPI 3.1 that
// api/openapi.yaml uses are read; anything else is left out, not guessed.
import { CORE_SCHEMA, load } from "js-yaml";

/** A node of the YAML document: JSON values only (CORE_SCHEMA reads no dates). */
type Node = Record<string, unknown>;

/** The HTTP methods an OpenAPI path item may hold, in the order shown. */
export const methods = ["get", "post", "put", "patch", "delete", "head", "options", "trace"] as const;

/** Spec is the whole reference. */
export interface Spec {
  title: string;
  version: string;
  description: string;
  schemes: Scheme[];
  tags: Tag[];
}

/** Scheme is a security scheme: how a credential is sent. */
export interface Scheme {
  name: string;
  label: string;
  description: string;
}

/** Tag is a group of operations. */
export interface Tag {
  name: string;
  description: string;
  operations: Operation[];
}

export interface Operation {
  /** The operation's anchor on the page: its operationId, or method and path. */
  id: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  /**
   * The ways to authenticate, each a list of scheme names sent together
   * (an empty list: without a credential); null when the document does
   * not say.
   */
  security: string[][] | null;
  parameters: Parameter[];
  body: Body | null;
  responses: Response[];
}

export interface Parameter {
  name: string;
  in: string;
  required: boolean;
  description: string;
  schema: SchemaView | null;
}

export interface Body {
  description: string;
  required: boolean;
  content: Content[];
}

export interface Content {
  mediaType: string;
  schema: SchemaView | null;
  /** The first example, written as JSON (or as the string it is), if any. */
  example: string | null;
}

export interface Response {
  status: string;
  description: string;
  content: Content[];
  /** The error codes this response can carry, from its schema and examples. */
  codes: string[];
}

/** SchemaView is a schema as the page shows it. */
export interface SchemaView {
  /** The component's name when it came from one ($ref), else its title. */
  name: string;
  /** A short type, such as "string", "integer or null", "array of FunnelStep". */
  type: string;
  description: string;
  /** Limits and allowed values, each a short phrase. */
  constraints: string[];
  /** The fields of an object (of an array's items, for an array of objects). */
  fields: Field[];
  /** The alternatives of a oneOf or anyOf that are objects. */
  variants: SchemaView[];
}

export interface Field {
  name: string;
  required: boolean;
  schema: SchemaView;
}

/** How deep nested objects are expanded; deeper ones show their type only. */
const maxDepth = 4;

/** parseSpec reads the YAML text of an OpenAPI document. */
export function parseSpec(text: string): Spec {
  const doc = load(text, { schema: CORE_SCHEMA });
  if (!isNode(doc) || typeof doc.openapi !== "string" || !isNode(doc.paths)) {
    throw new Error("The document is not an OpenAPI description: it has no openapi version or no paths.");
  }
  return new Reader(doc).spec();
}

function isNode(v: unknown): v is Node {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** refName is the last segment of a local reference: "#/components/schemas/Flag" → "Flag". */
function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf("/") + 1).replace(/~1/g, "/").replace(/~0/g, "~");
}

class Reader {
  constructor(private readonly doc: Node) {}

  /** resolve follows $ref (local references only) until a node that is not one. */
  resolve(v: unknown, seen = new Set<string>()): Node | null {
    if (!isNode(v)) return null;
    const ref = v.$ref;
    if (typeof ref !== "string") return v;
    if (!ref.startsWith("#/") || seen.has(ref)) return null;
    seen.add(ref);
    let cur: unknown = this.doc;
    for (const part of ref.slice(2).split("/")) {
      cur = isNode(cur) ? cur[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    }
    const target = this.resolve(cur, seen);
    if (!target) return null;
    // OpenAPI 3.1 lets a reference carry its own description and summary.
    const own = Object.fromEntries(Object.entries(v).filter(([k]) => k === "description" || k === "summary"));
    return { ...target, ...own };
  }

  spec(): Spec {
    const info = isNode(this.doc.info) ? this.doc.info : {};
    const components = isNode(this.doc.components) ? this.doc.components : {};
    const schemes = Object.entries(isNode(components.securitySchemes) ? components.securitySchemes : {}).map(([name, raw]) => {
      const s = this.resolve(raw) ?? {};
      return { name, label: schemeLabel(s), description: str(s.description) };
    });
    const tags: Tag[] = (Array.isArray(this.doc.tags) ? this.doc.tags : []).filter(isNode).map((t) => ({
      name: str(t.name),
      description: str(t.description),
      operations: [],
    }));
    const byName = new Map(tags.map((t) => [t.name, t]));
    const globalSecurity = this.doc.security;
    for (const [path, rawItem] of Object.entries(this.doc.paths as Node)) {
      const item = this.resolve(rawItem);
      if (!item) continue;
      for (const method of methods) {
        const op = item[method];
        if (!isNode(op)) continue;
        const tagName = Array.isArray(op.tags) && typeof op.tags[0] === "string" ? op.tags[0] : "other";
        let tag = byName.get(tagName);
        if (!tag) {
          tag = { name: tagName, description: "", operations: [] };
          byName.set(tagName, tag);
          tags.push(tag);
        }
        tag.operations.push(this.operation(path, method, op, item, globalSecurity));
      }
    }
    return {
      title: str(info.title) || "API",
      version: str(info.version),
      description: str(info.description),
      schemes,
      tags: tags.filter((t) => t.operations.length > 0),
    };
  }

  operation(path: string, method: string, op: Node, item: Node, globalSecurity: unknown): Operation {
    // Path-level parameters apply unless the operation names the same one.
    const params = new Map<string, Parameter>();
    for (const raw of [...arr(item.parameters), ...arr(op.parameters)]) {
      const p = this.resolve(raw);
      if (!p) continue;
      params.set(`${str(p.in)} ${str(p.name)}`, {
        name: str(p.name),
        in: str(p.in),
        required: p.required === true,
        description: str(p.description),
        schema: p.schema === undefined ? null : this.schema(p.schema, 1, []),
      });
    }
    const security = op.security !== undefined ? op.security : globalSecurity;
    const body = this.resolve(op.requestBody);
    const responses = this.resolve(op.responses) ?? {};
    return {
      id: str(op.operationId) || `${method}-${path}`.replace(/[^A-Za-z0-9_-]+/g, "-"),
      method: method.toUpperCase(),
      path,
      summary: str(op.summary),
      description: str(op.description),
      security: Array.isArray(security) ? security.filter(isNode).map((req) => Object.keys(req)) : null,
      parameters: [...params.values()],
      body: body ? { description: str(body.description), required: body.required === true, content: this.content(body.content, true) } : null,
      responses: Object.entries(responses).map(([status, raw]) => {
        const r = this.resolve(raw) ?? {};
        const content = this.content(r.content, status.startsWith("2"));
        return { status, description: str(r.description), content, codes: this.codes(r.content) };
      }),
    };
  }

  /**
   * content reads a content map. Fields and examples are read only where
   * asked: an error's body is the same Error everywhere, and its codes say
   * what differs.
   */
  content(raw: unknown, expand: boolean): Content[] {
    if (!isNode(raw)) return [];
    return Object.entries(raw).map(([mediaType, m]) => {
      const media = this.resolve(m) ?? {};
      const schema = media.schema === undefined ? null : this.schema(media.schema, expand ? 1 : maxDepth + 1, []);
      return { mediaType, schema, example: expand ? this.example(media) : null };
    });
  }

  /** example is a media type's example, or its first named one, as text. */
  example(media: Node): string | null {
    let value: unknown;
    if ("example" in media) value = media.example;
    else if (isNode(media.examples)) {
      const first = Object.values(media.examples)[0];
      const ex = this.resolve(first);
      if (!ex || !("value" in ex)) return null;
      value = ex.value;
    } else return null;
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  /**
   * codes lists the error codes of a response: the enum or const of its
   * schema's error.code, then any other code its examples show.
   */
  codes(raw: unknown): string[] {
    const out: string[] = [];
    const add = (c: unknown) => {
      if (typeof c === "string" && c !== "" && !out.includes(c)) out.push(c);
    };
    if (!isNode(raw)) return out;
    for (const m of Object.values(raw)) {
      const media = this.resolve(m) ?? {};
      const schema = this.flatten(media.schema, []);
      const error = schema && this.flatten(prop(schema, "error"), []);
      const code = error && this.flatten(prop(error, "code"), []);
      if (code) {
        arr(code.enum).forEach(add);
        add(code.const);
      }
      for (const ex of Object.values(isNode(media.examples) ? media.examples : {})) {
        const value = this.resolve(ex)?.value;
        if (isNode(value) && isNode(value.error)) add(value.error.code);
      }
    }
    return out;
  }

  /**
   * flatten resolves a schema and merges its allOf parts into one: their
   * properties (a property named by several parts is merged the same way),
   * required lists and the first description, title and type.
   */
  flatten(raw: unknown, stack: string[]): Node | null {
    const ref = isNode(raw) && typeof raw.$ref === "string" ? raw.$ref : null;
    if (ref && stack.includes(ref)) return null;
    const s = this.resolve(raw);
    if (!s) return null;
    const inner = ref ? [...stack, ref] : stack;
    if (!Array.isArray(s.allOf)) return s;
    let merged: Node = { ...s };
    delete merged.allOf;
    for (const part of s.allOf) {
      const p = this.flatten(part, inner);
      if (p) merged = merge(merged, p, (a, b) => this.mergeProps(a, b, inner));
    }
    return merged;
  }

  mergeProps(a: unknown, b: unknown, stack: string[]): Node {
    const x = this.flatten(a, stack) ?? {};
    const y = this.flatten(b, stack) ?? {};
    return merge(x, y, (p, q) => this.mergeProps(p, q, stack));
  }

  /** schema turns a schema into what the page shows, expanding objects depth levels deep. */
  schema(raw: unknown, depth: number, stack: string[]): SchemaView {
    const ref = isNode(raw) && typeof raw.$ref === "string" ? raw.$ref : null;
    const name = ref ? refName(ref) : "";
    const cyclic = ref !== null && stack.includes(ref);
    const s = cyclic ? null : this.flatten(raw, stack);
    if (!s) return { name, type: name || "any", description: "", constraints: [], fields: [], variants: [] };
    const inner = ref ? [...stack, ref] : stack;
    const view: SchemaView = {
      name: name || str(s.title),
      type: this.typeLabel(s, inner),
      description: str(s.description),
      constraints: constraints(s),
      fields: [],
      variants: [],
    };
    if (depth > maxDepth) return view;
    const props = isNode(s.properties) ? s.properties : null;
    if (props) {
      const required = arr(s.required);
      view.fields = Object.entries(props).map(([field, p]) => ({
        name: field,
        required: required.includes(field),
        schema: this.schema(p, depth + 1, inner),
      }));
    } else if (s.items !== undefined) {
      const items = this.schema(s.items, depth, inner);
      view.fields = items.fields;
      view.variants = items.variants;
    }
    const alternatives = arr(s.oneOf).length ? arr(s.oneOf) : arr(s.anyOf);
    for (const alt of alternatives) {
      const v = this.schema(alt, depth + 1, inner);
      if (v.fields.length) view.variants.push(v);
    }
    return view;
  }

  /** typeLabel is a schema's type in a few words. */
  typeLabel(s: Node, stack: string[]): string {
    if ("const" in s) return `${JSON.stringify(s.const)}`;
    const types = (Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]).map(String);
    const nullable = types.includes("null");
    const main = types.filter((t) => t !== "null");
    if (nullable && main.length === 0) return "null";
    let label: string;
    if ((main.length === 1 && main[0] === "array") || (main.length === 0 && s.items !== undefined)) {
      label = `array of ${this.itemLabel(s.items, stack)}`;
    } else if (main.length) {
      label = main.join(" or ");
      if (typeof s.format === "string") label += ` (${s.format})`;
    } else {
      const alts = arr(s.oneOf).length ? arr(s.oneOf) : arr(s.anyOf);
      if (alts.length) {
        label = alts.map((a) => this.itemLabel(a, stack)).join(" or ");
      } else if (Array.isArray(s.enum)) {
        label = s.enum.map((v) => JSON.stringify(v)).join(" or ");
      } else if (isNode(s.properties)) {
        label = "object";
      } else label = "any";
    }
    return nullable ? `${label} or null` : label;
  }

  /**
   * itemLabel names an array's items or an alternative: an object by its
   * component's name (its fields are shown below), anything else by its
   * type.
   */
  itemLabel(raw: unknown, stack: string[]): string {
    const ref = isNode(raw) && typeof raw.$ref === "string" ? raw.$ref : null;
    if (ref && stack.includes(ref)) return refName(ref);
    const s = this.flatten(raw, stack);
    if (!s) return ref ? refName(ref) : "any";
    if (ref && (isNode(s.properties) || s.type === "object")) return refName(ref);
    return this.typeLabel(s, ref ? [...stack, ref] : stack);
  }
}

/** constraints writes a schema's limits and allowed values as short phrases. */
function constraints(s: Node): string[] {
  const out: string[] = [];
  const num = (k: string) => (typeof s[k] === "number" ? (s[k] as number) : undefined);
  const range = (lo: number | undefined, hi: number | undefined, unit: string) => {
    if (lo !== undefined && hi !== undefined) out.push(`${lo}–${hi}${unit}`);
    else if (lo !== undefined) out.push(`at least ${lo}${unit}`);
    else if (hi !== undefined) out.push(`at most ${hi}${unit}`);
  };
  range(num("minimum"), num("maximum"), "");
  if (num("exclusiveMinimum") !== undefined) out.push(`over ${num("exclusiveMinimum")}`);
  if (num("exclusiveMaximum") !== undefined) out.push(`under ${num("exclusiveMaximum")}`);
  range(num("minLength"), num("maxLength"), " characters");
  range(num("minItems"), num("maxItems"), " items");
  if (Array.isArray(s.enum) && (s.type !== undefined || isNode(s.items))) {
    out.push(`one of ${s.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  }
  if ("default" in s) out.push(`default ${JSON.stringify(s.default)}`);
  if (typeof s.pattern === "string") out.push(`pattern ${s.pattern}`);
  return out;
}

/** schemeLabel says in a few words how a scheme's credential is sent. */
function schemeLabel(s: Node): string {
  if (s.type === "http" && str(s.scheme).toLowerCase() === "bearer") {
    return s.bearerFormat ? `Authorization: Bearer (${str(s.bearerFormat)})` : "Authorization: Bearer";
  }
  if (s.type === "http") return `Authorization: ${str(s.scheme)}`;
  if (s.type === "apiKey") {
    const where = { header: "header", query: "query parameter", cookie: "cookie" }[str(s.in)] ?? str(s.in);
    return `${str(s.name)} ${where}`;
  }
  return str(s.type);
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function prop(s: Node, name: string): unknown {
  return isNode(s.properties) ? s.properties[name] : undefined;
}

/**
 * merge combines two flattened schemas: b's keys win, except properties
 * (merged one by one with mergeProp) and required (both lists).
 */
function merge(a: Node, b: Node, mergeProp: (x: unknown, y: unknown) => Node): Node {
  const out: Node = { ...b, ...Object.fromEntries(Object.entries(a).filter(([k]) => k === "description" || k === "title")) };
  for (const [k, v] of Object.entries(a)) if (!(k in out)) out[k] = v;
  if (isNode(a.properties) || isNode(b.properties)) {
    const pa = isNode(a.properties) ? a.properties : {};
    const pb = isNode(b.properties) ? b.properties : {};
    const props: Node = { ...pa };
    for (const [k, v] of Object.entries(pb)) props[k] = k in pa ? mergeProp(pa[k], v) : v;
    out.properties = props;
  }
  const required = [...new Set([...arr(a.required), ...arr(b.required)])];
  if (required.length) out.required = required;
  return out;
}
