import { validation } from "../../lib/errors";

/**
 * The static cost of validating values against a JSON Schema, so that a
 * schema whose checks would take exponential time is refused when it is
 * saved (issue 25: a 1.6 KB `$defs` chain whose levels are
 * `anyOf: [{$ref: next}, {$ref: next}]` made one check of `1` take 4.8 s
 * and 2.4 GB).
 *
 * Validation evaluates schema nodes at value locations. Applicators that stay
 * on the same location (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/
 * `then`/`else`, `dependentSchemas`) add their branches' costs; those that
 * move to a child location (`properties`, `items`, ...) add their costs one
 * level down. For every schema node and every value depth d the estimate is
 * an upper bound on the (weighted) evaluations one value location d levels
 * below it can cause, memoised per node and depth, so repeated `$ref`s cost
 * one computation each instead of their exponential expansion. A location
 * matches one of `properties` (and one of `prefixItems`), hence their max.
 * Value depth is bounded (MAX_DEPTH), so recursion through children ends;
 * recursion that stays on one location never does and is refused.
 */

/** Most weighted schema evaluations one value location may cause; ref-free schemas within the size limit stay far below. */
export const SCHEMA_COST_BUDGET = 200_000;

/** What a `$ref` the estimate cannot follow (the dialect's meta-schema, which ajv knows) is taken to cost at each depth. */
const UNKNOWN_REF_COST = 2_000;

const DEFAULT_BASE = "https://svc.invalid/schema.json";

/** Applicators evaluated on the same value location. */
const IN_PLACE_ONE = ["not", "if", "then", "else"] as const;
const IN_PLACE_MANY = ["allOf", "anyOf", "oneOf"] as const;
/** Maps of subschemas evaluated on the same location (draft-07 `dependencies` mixes in string arrays). */
const IN_PLACE_MAPS = ["dependentSchemas", "dependencies"] as const;
/** Applicators on an object's members, each member matching at most one `properties` entry. */
const MEMBER_ONE = ["additionalProperties", "unevaluatedProperties", "propertyNames"] as const;
/** Applicators on an array's items beside `items`/`prefixItems`. */
const ITEM_EXTRA = ["contains", "unevaluatedItems"] as const;
/** Schemas kept for `$ref` only. */
const DEFINITIONS = ["$defs", "definitions"] as const;

type Node = {
  path: string;
  weight: number;
  /** Same-location branches. */
  inPlace: number[];
  /** Member branches: `properties` entries (one applies), and the rest (all may apply). */
  memberOneOf: number[];
  memberAll: number[];
  /** Item branches: positional ones (one applies), the rest (all may apply). */
  itemOneOf: number[];
  itemAll: number[];
  /** `$ref`s the estimate cannot follow. */
  unknownRefs: number;
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One JSON Pointer token as a path segment (JSON Pointer escapes). */
const token = (key: string | number) => String(key).replaceAll("~", "~0").replaceAll("/", "~1");

class Graph {
  readonly nodes: Node[] = [];
  private readonly index = new Map<object, number>();
  /** Schema resources by absolute URI (no fragment), and anchors by `uri#name`. */
  private readonly resources = new Map<string, unknown>();
  private readonly anchors = new Map<string, unknown>();
  private readonly dynamicAnchors = new Map<string, unknown[]>();
  private readonly bases = new Map<object, string>();
  private readonly refs: { from: number; ref: string; base: string; dynamic: boolean }[] = [];
  private readonly leaf: number;

  constructor(root: unknown) {
    this.leaf = this.push({ path: "schema", weight: 1 });
    this.collect(root, "schema", DEFAULT_BASE);
    this.add(root, "schema");
    for (const r of this.refs) this.link(r);
  }

  /** First pass: base URIs, resources and anchors of every schema in the tree. */
  private collect(schema: unknown, path: string, parentBase: string): void {
    if (!isObject(schema)) return;
    let base = parentBase;
    if (typeof schema.$id === "string") {
      const id = safeUrl(schema.$id, parentBase);
      if (id) {
        // Draft-07 anchors are `$id: "#name"`.
        if (id.hash && schema.$id.startsWith("#")) this.anchors.set(`${withoutHash(id)}${id.hash}`, schema);
        else {
          base = withoutHash(id);
          this.resources.set(base, schema);
        }
      }
    }
    if (path === "schema") this.resources.set(base, schema);
    this.bases.set(schema, base);
    if (typeof schema.$anchor === "string") this.anchors.set(`${base}#${schema.$anchor}`, schema);
    if (typeof schema.$dynamicAnchor === "string") {
      this.anchors.set(`${base}#${schema.$dynamicAnchor}`, schema);
      const all = this.dynamicAnchors.get(schema.$dynamicAnchor) ?? [];
      all.push(schema);
      this.dynamicAnchors.set(schema.$dynamicAnchor, all);
    }
    for (const [sub, subPath] of subschemas(schema, path)) this.collect(sub, subPath, base);
  }

  private push(partial: Partial<Node> & { path: string; weight: number }): number {
    this.nodes.push({ inPlace: [], memberOneOf: [], memberAll: [], itemOneOf: [], itemAll: [], unknownRefs: 0, ...partial });
    return this.nodes.length - 1;
  }

  /** Second pass: one node per schema object (booleans share the leaf), with its branches. */
  private add(schema: unknown, path: string): number {
    if (!isObject(schema)) return this.leaf;
    const known = this.index.get(schema);
    if (known !== undefined) return known;
    const id = this.push({ path, weight: weightOf(schema) });
    this.index.set(schema, id);
    const node = this.nodes[id]!;
    const base = this.bases.get(schema) ?? DEFAULT_BASE;
    for (const key of IN_PLACE_ONE) if (key in schema) node.inPlace.push(this.add(schema[key], `${path}/${key}`));
    for (const key of IN_PLACE_MANY) {
      const list = schema[key];
      if (Array.isArray(list)) list.forEach((sub, i) => node.inPlace.push(this.add(sub, `${path}/${key}/${i}`)));
    }
    for (const key of IN_PLACE_MAPS) {
      const map = schema[key];
      if (!isObject(map)) continue;
      for (const [name, sub] of Object.entries(map)) if (!Array.isArray(sub)) node.inPlace.push(this.add(sub, `${path}/${key}/${token(name)}`));
    }
    if (isObject(schema.properties)) {
      for (const [name, sub] of Object.entries(schema.properties)) node.memberOneOf.push(this.add(sub, `${path}/properties/${token(name)}`));
    }
    if (isObject(schema.patternProperties)) {
      for (const [name, sub] of Object.entries(schema.patternProperties)) node.memberAll.push(this.add(sub, `${path}/patternProperties/${token(name)}`));
    }
    for (const key of MEMBER_ONE) if (key in schema) node.memberAll.push(this.add(schema[key], `${path}/${key}`));
    if (Array.isArray(schema.prefixItems)) schema.prefixItems.forEach((sub, i) => node.itemOneOf.push(this.add(sub, `${path}/prefixItems/${i}`)));
    if (Array.isArray(schema.items)) schema.items.forEach((sub, i) => node.itemOneOf.push(this.add(sub, `${path}/items/${i}`)));
    else if ("items" in schema) node.itemOneOf.push(this.add(schema.items, `${path}/items`));
    // draft-07: additionalItems applies to the items after a tuple, in place of it.
    if ("additionalItems" in schema) node.itemOneOf.push(this.add(schema.additionalItems, `${path}/additionalItems`));
    for (const key of ITEM_EXTRA) if (key in schema) node.itemAll.push(this.add(schema[key], `${path}/${key}`));
    for (const key of DEFINITIONS) {
      const defs = schema[key];
      if (isObject(defs)) for (const [name, sub] of Object.entries(defs)) this.add(sub, `${path}/${key}/${token(name)}`);
    }
    if (typeof schema.$ref === "string") this.refs.push({ from: id, ref: schema.$ref, base, dynamic: false });
    if (typeof schema.$dynamicRef === "string") this.refs.push({ from: id, ref: schema.$dynamicRef, base, dynamic: true });
    return id;
  }

  /** A `$ref` (or `$dynamicRef`: every same-named `$dynamicAnchor` too) becomes same-location branches. */
  private link(r: { from: number; ref: string; base: string; dynamic: boolean }): void {
    const node = this.nodes[r.from]!;
    const targets = new Set<unknown>();
    const found = this.resolve(r.ref, r.base);
    if (found !== undefined) targets.add(found);
    if (r.dynamic && r.ref.includes("#")) for (const t of this.dynamicAnchors.get(r.ref.slice(r.ref.indexOf("#") + 1)) ?? []) targets.add(t);
    if (targets.size === 0) node.unknownRefs++;
    for (const target of targets) {
      // A target that no applicator reaches (a `$ref` into `default`, say) gets a node of its own.
      const path = isObject(target) ? (this.index.has(target) ? "" : `${node.path}/$ref`) : "";
      node.inPlace.push(this.add(target, path));
    }
  }

  private resolve(ref: string, base: string): unknown {
    const url = safeUrl(ref, base);
    if (!url) return undefined;
    const resource = this.resources.get(withoutHash(url));
    const fragment = decodeURIComponent(url.hash.slice(1));
    if (fragment === "") return resource;
    if (!fragment.startsWith("/")) return this.anchors.get(`${withoutHash(url)}#${fragment}`);
    let at: unknown = resource;
    for (const raw of fragment.slice(1).split("/")) {
      const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
      if (Array.isArray(at)) at = at[Number(key)];
      else if (isObject(at) && Object.hasOwn(at, key)) at = at[key];
      else return undefined;
    }
    return typeof at === "boolean" || isObject(at) ? at : undefined;
  }
}

function safeUrl(ref: string, base: string): URL | null {
  try {
    return new URL(ref, base);
  } catch {
    return null;
  }
}

const withoutHash = (url: URL) => url.href.replace(/#.*$/, "");

/** Every subschema position of a schema object (for the anchor pass), with its path. */
function* subschemas(schema: Record<string, unknown>, path: string): Generator<[unknown, string]> {
  for (const [key, value] of Object.entries(schema)) {
    if ((IN_PLACE_ONE as readonly string[]).includes(key) || (MEMBER_ONE as readonly string[]).includes(key) || (ITEM_EXTRA as readonly string[]).includes(key)) {
      yield [value, `${path}/${key}`];
    } else if (key === "items" || key === "additionalItems" || key === "prefixItems" || (IN_PLACE_MANY as readonly string[]).includes(key)) {
      if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield [value[i], `${path}/${key}/${i}`];
      else yield [value, `${path}/${key}`];
    } else if (key === "properties" || key === "patternProperties" || (IN_PLACE_MAPS as readonly string[]).includes(key) || (DEFINITIONS as readonly string[]).includes(key)) {
      if (isObject(value)) for (const [name, sub] of Object.entries(value)) yield [sub, `${path}/${key}/${token(name)}`];
    }
  }
}

/** What evaluating one schema object's own keywords costs, roughly: one per keyword and per entry of its lists and maps. */
function weightOf(schema: Record<string, unknown>): number {
  let weight = 1;
  for (const value of Object.values(schema)) {
    if (Array.isArray(value)) weight += value.length;
    else if (isObject(value)) weight += Object.keys(value).length;
    else weight += 1;
  }
  return weight;
}

/**
 * VALIDATION naming the schema path when validating one value location (at
 * any depth up to `maxDepth` below the root) could cost more than the budget,
 * or when the schema applies itself on the same location without end.
 */
export function checkSchemaCost(schema: unknown, maxDepth: number, budget = SCHEMA_COST_BUDGET): Float64Array {
  const graph = new Graph(schema);
  const { nodes } = graph;
  const order = inPlaceOrder(nodes);
  let previous = new Float64Array(nodes.length);
  let current = new Float64Array(nodes.length);
  /** The root's cost at each depth: what one value location that deep costs (the root is the node of the whole schema). */
  const root = nodes.length > 1 ? 1 : 0;
  const byDepth = new Float64Array(maxDepth + 1);
  for (let depth = 0; depth <= maxDepth; depth++) {
    for (const id of order) {
      const node = nodes[id]!;
      let cost = depth === 0 ? node.weight : 0;
      cost += node.unknownRefs * UNKNOWN_REF_COST;
      for (const sub of node.inPlace) cost += current[sub]!;
      if (depth > 0) {
        let members = 0;
        for (const sub of node.memberOneOf) members = Math.max(members, previous[sub]!);
        for (const sub of node.memberAll) members += previous[sub]!;
        let items = 0;
        for (const sub of node.itemOneOf) items = Math.max(items, previous[sub]!);
        for (const sub of node.itemAll) items += previous[sub]!;
        // A location is an object or an array, never both.
        cost += Math.max(members, items);
      }
      if (cost > budget) {
        throw validation(
          "schema is too costly to validate against",
          `${node.path}: validating one value location against it could take ${formatCount(cost)} schema evaluations (branches of anyOf/oneOf/allOf and $ref multiply); at most ${formatCount(budget)}`,
        );
      }
      current[id] = cost;
    }
    byDepth[depth] = current[root]!;
    [previous, current] = [current, previous];
    current.fill(0);
  }
  return byDepth;
}

/**
 * VALIDATION when checking this value could cost more than `budget`
 * evaluations: the sum over its locations of what one location at that depth
 * costs (`byDepth`, from checkSchemaCost). Bounds the time and the errors
 * collected before any of it is spent.
 */
export function checkValueCost(value: unknown, byDepth: Float64Array, budget: number, label: string): void {
  let total = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    total += byDepth[Math.min(depth, byDepth.length - 1)]!;
    if (typeof node === "object" && node !== null) {
      for (const child of Object.values(node)) stack.push([child, depth + 1]);
    }
  }
  if (total > budget) {
    throw validation(
      `${label} is too costly to validate against the schema`,
      `${label}: checking it against the config's schema could take ${formatCount(total)} schema evaluations; at most ${formatCount(budget)} (a smaller value, or a schema with fewer anyOf/oneOf/$ref branches)`,
    );
  }
}

function formatCount(n: number): string {
  return n >= 1e15 ? "more than 1e15" : Math.round(n).toLocaleString("en-US");
}

/**
 * Nodes ordered so that each comes after every node it reaches on the same
 * location; a cycle there is a schema that recurses without consuming the
 * value, refused naming a node on it.
 */
function inPlaceOrder(nodes: Node[]): number[] {
  const state = new Uint8Array(nodes.length); // 0 new, 1 on the path, 2 done
  const order: number[] = [];
  for (let start = 0; start < nodes.length; start++) {
    if (state[start] !== 0) continue;
    // Iterative depth-first search: [node, next branch index].
    const stack: [number, number][] = [[start, 0]];
    state[start] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [id, next] = top;
      const branches = nodes[id]!.inPlace;
      if (next < branches.length) {
        top[1]++;
        const sub = branches[next]!;
        if (state[sub] === 1) {
          throw validation(
            "schema recurses without end",
            `${nodes[sub]!.path}: applies itself to the same value location again ($ref/allOf/anyOf/oneOf/not/if without a step into the value)`,
          );
        }
        if (state[sub] === 0) {
          state[sub] = 1;
          stack.push([sub, 0]);
        }
      } else {
        state[id] = 2;
        order.push(id);
        stack.pop();
      }
    }
  }
  return order;
}
