/**
 * RBAC coverage as Kubernetes decides it (pkg/registry/rbac/validation: `BreakdownRule`, `Covers`,
 * `ruleCovers`): a rule is broken down into pieces — one verb on one resource of one group (and one name when
 * the rule names any), or one verb on one non-resource URL — and a piece is covered when one rule of the owner
 * covers it. The local API server's escalation prevention (src/apiserver/rbac-escalation.ts) and the
 * installer's RBAC ceiling (src/installer/ceiling.ts) both decide with it, so the installer refuses what
 * kube-apiserver would refuse. Pure.
 */

export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

/** One verb on one resource of one group (maybe one name), or one verb on one non-resource URL. */
export type RulePiece =
  | {
      readonly verb: string;
      readonly group: string;
      readonly resource: string;
      readonly resourceName?: string;
    }
  | { readonly verb: string; readonly url: string };

/** How many pieces `pieces` yields for the rules, without building them (a rule bomb is refused by size). */
export const pieceCount = (rules: readonly PolicyRule[]): number =>
  rules.reduce(
    (n, r) =>
      n +
      r.verbs.length *
        (r.apiGroups.length * r.resources.length * Math.max(1, r.resourceNames.length) +
          r.nonResourceURLs.length),
    0,
  );

/** kube's `BreakdownRule`, in its order: groups, resources, verbs, names; then URLs × verbs. */
export function* pieces(rule: PolicyRule): Generator<RulePiece> {
  for (const group of rule.apiGroups)
    for (const resource of rule.resources)
      for (const verb of rule.verbs)
        if (rule.resourceNames.length === 0) yield { verb, group, resource };
        else for (const resourceName of rule.resourceNames) yield { verb, group, resource, resourceName };
  for (const url of rule.nonResourceURLs) for (const verb of rule.verbs) yield { verb, url };
}

const has = (list: readonly string[], item: string): boolean => list.includes(item);

/** kube's `hasResource`: `*`, the resource itself, or `*\/subresource`. */
const resourceCovered = (owner: readonly string[], resource: string): boolean => {
  if (has(owner, "*") || has(owner, resource)) return true;
  const slash = resource.indexOf("/");
  return slash >= 0 && has(owner, `*${resource.slice(slash)}`);
};

/** kube's `nonResourceURLCovers`: the same path, or a prefix ending in `*` (`*` alone covers every path). */
const urlCovered = (owner: readonly string[], url: string): boolean =>
  owner.some((o) => o === url || (o.endsWith("*") && url.startsWith(o.replace(/\*+$/, ""))));

/** kube's `ruleCovers` for one piece. */
export const coversPiece = (owner: PolicyRule, piece: RulePiece): boolean => {
  if (!has(owner.verbs, "*") && !has(owner.verbs, piece.verb)) return false;
  if ("url" in piece) return urlCovered(owner.nonResourceURLs, piece.url);
  if (!has(owner.apiGroups, "*") && !has(owner.apiGroups, piece.group)) return false;
  if (!resourceCovered(owner.resources, piece.resource)) return false;
  return (
    owner.resourceNames.length === 0 ||
    (piece.resourceName !== undefined && has(owner.resourceNames, piece.resourceName))
  );
};

/** kube's `Covers`: the pieces of `rules` no rule of `owner` covers, in breakdown order. */
export const uncoveredPieces = (owner: readonly PolicyRule[], rules: readonly PolicyRule[]): RulePiece[] => {
  const out: RulePiece[] = [];
  for (const r of rules) for (const p of pieces(r)) if (!owner.some((o) => coversPiece(o, p))) out.push(p);
  return out;
};
