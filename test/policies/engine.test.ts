/**
 * The engine's cross-cutting behaviour: not enforcing (SPEC §0.1), controller identities (§2.2),
 * namespaces, CONNECT, stale views (§2.1), first deny wins, warnings and mutations accumulating, bounded
 * warnings, and totality — a rule that throws denies on `validate` and is skipped on the Ignore webhooks.
 */
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { MAX_PATH_LENGTH } from "../../src/policies/diff.js";
import { boundedWarning, decide, MAX_WARNING_LENGTH } from "../../src/policies/engine.js";
import { RULE_IDS, RULES } from "../../src/policies/rules/index.js";
import type { PolicyContext } from "../../src/policies/types.js";
import { allow, deny, mutate, type Rule, warn } from "../../src/policies/verdict.js";
import {
  ADMIN,
  awsMachine,
  capiMachine,
  context,
  createRequest,
  deleteRequest,
  edit,
  MASTERS,
  mapiMachine,
  PRODUCT_USER,
  updateRequest,
} from "./builders.js";

const frozenEdit = () => {
  const m = mapiMachine({ status: "ClusterAPI" });
  return updateRequest(
    m,
    edit(m, (d) => {
      d.spec.providerSpec.value.instanceType = "m6i.2xlarge";
    }),
  );
};

describe("engine: who and where", () => {
  it("not-enforcing: without the migration API every webhook allows everything", () => {
    const ctx = context([capiMachine({ paused: "none" })], { enforcing: false });
    expect(decide("validate", frozenEdit(), ctx)).toEqual({
      allowed: true,
      rule: "not-enforcing",
      warnings: [],
    });
    expect(decide("validate-guard", deleteRequest(capiMachine()), ctx)).toEqual({
      allowed: true,
      rule: "not-enforcing",
      warnings: [],
    });
    expect(decide("mutate", createRequest(capiMachine({ paused: "none" })), ctx).patch).toBeUndefined();
  });

  it("controller users are exempt from every rule, whatever their groups", () => {
    const request = {
      ...frozenEdit(),
      userInfo: { username: PRODUCT_USER, groups: ["system:authenticated"] },
    };
    expect(decide("validate", request, context([]))).toEqual({
      allowed: true,
      rule: "controller-user",
      warnings: [],
    });
    const gc = {
      ...deleteRequest(capiMachine()),
      userInfo: { username: "system:serviceaccount:kube-system:generic-garbage-collector" },
    };
    expect(decide("validate-guard", gc, context([mapiMachine()])).rule).toBe("controller-user");
  });

  it("system:masters is not exempt, nor is a user who merely shares a controller's groups", () => {
    expect(decide("validate", { ...frozenEdit(), userInfo: MASTERS }, context([])).rule).toBe("mapi-frozen");
    const lookalike = {
      username: "system:serviceaccount:openshift-cluster-api:someone-else",
      groups: ["system:serviceaccounts", "system:serviceaccounts:openshift-cluster-api"],
    };
    expect(decide("validate", { ...frozenEdit(), userInfo: lookalike }, context([])).rule).toBe(
      "mapi-frozen",
    );
  });

  it("objects outside the two namespaces are not the rules' business", () => {
    const request = frozenEdit();
    const elsewhere = { ...request, namespace: "default" };
    expect(decide("validate", elsewhere, context([])).allowed).toBe(true);
    // A MAPI kind in the CAPI namespace is not a MAPI Machine of this product either.
    const misplaced = { ...request, namespace: "openshift-cluster-api" };
    expect(decide("validate", misplaced, context([])).rule).toBe("none");
  });

  it("CONNECT is allowed", () => {
    expect(decide("validate", { ...frozenEdit(), operation: "CONNECT" }, context([])).allowed).toBe(true);
  });
});

describe("engine: stale view", () => {
  const create = createRequest(capiMachine({ paused: "none" }));
  const withFreshness = (synced: boolean, disconnectedForMs: number): PolicyContext =>
    context([mapiMachine()], { freshness: () => ({ synced, disconnectedForMs }) });

  it("a kind that is not synced answers retry", () => {
    const d = decide("validate", create, withFreshness(false, 0));
    expect(d).toMatchObject({
      allowed: false,
      rule: "capi-create-paused",
      status: { code: 403, reason: "Forbidden" },
    });
    expect(d.status?.message).toContain("cluster view is stale, retry in a few seconds");
  });

  it("a watch disconnected longer than cacheStaleAfter answers retry; a connected quiet one does not", () => {
    expect(decide("validate", create, withFreshness(true, 30_001)).status?.message).toContain(
      "cluster view is stale, retry in a few seconds",
    );
    expect(decide("validate", create, withFreshness(true, 30_000)).rule).toBe("capi-create-paused");
    expect(decide("validate", create, withFreshness(true, 30_000)).status?.message).not.toContain("stale");
  });

  it("a rule that reads a stale kind it did not declare also answers retry", () => {
    const sneaky: Rule = {
      id: "sneaky",
      webhook: "validate",
      reads: [],
      appliesTo: () => true,
      check: (_, ctx) => (ctx.view.get(KINDS.capiCluster, "openshift-cluster-api", "x") ? allow() : allow()),
    };
    const ctx = context([], {
      freshness: (t) => ({ synced: t !== KINDS.capiCluster, disconnectedForMs: 0 }),
    });
    const d = decide("validate", create, ctx, [sneaky]);
    expect(d).toMatchObject({ allowed: false, rule: "sneaky" });
    expect(d.status?.message).toBe(
      "cluster view is stale, retry in a few seconds (clusters.cluster.x-k8s.io: cache not synced). (rule sneaky)",
    );
  });

  it("rules that read nothing from the view decide even when every kind is stale", () => {
    const ctx = context([], { freshness: () => ({ synced: false, disconnectedForMs: 0 }) });
    const bad = edit(mapiMachine(), (m) => {
      m.spec.authoritativeAPI = "Migrating";
    });
    expect(decide("validate", updateRequest(mapiMachine(), bad), ctx).rule).toBe("authority-enum");
  });
});

describe("engine: folding verdicts", () => {
  const rule = (id: string, webhook: Rule["webhook"], check: Rule["check"]): Rule => ({
    id,
    webhook,
    reads: [],
    appliesTo: () => true,
    check,
  });

  it("classifies the request's subject once and hands that one to every rule's appliesTo and check", () => {
    const seen: unknown[] = [];
    const recording = (id: string): Rule => ({
      id,
      webhook: "validate",
      reads: [],
      appliesTo: (_request, ctx) => {
        seen.push(ctx.subject);
        return true;
      },
      check: (_request, ctx) => {
        seen.push(ctx.subject);
        return allow();
      },
    });
    decide("validate", frozenEdit(), context([]), [recording("r1"), recording("r2")]);
    expect(seen).toHaveLength(4);
    expect(seen[0]).toMatchObject({ api: "mapi", role: "machine", kind: "Machine", subResource: "" });
    for (const subject of seen) expect(subject).toBe(seen[0]);
  });

  it("the first deny wins, in RULES order", () => {
    const both = edit(capiMachine(), (c) => {
      c.spec.version = "v1.31.0";
    });
    const d = decide("validate", updateRequest(capiMachine(), both), context([mapiMachine()]));
    expect(d.rule).toBe("capi-unsupported-fields");
  });

  it("warnings accumulate (deduplicated) and the first speaker names the decision", () => {
    const rules = [
      rule("w1", "validate-guard", () => warn("first")),
      rule("w2", "validate-guard", () => warn("second")),
      rule("w3", "validate-guard", () => warn("first")),
    ];
    expect(decide("validate-guard", frozenEdit(), context([]), rules)).toEqual({
      allowed: true,
      rule: "w1",
      warnings: ["first", "second"],
    });
  });

  it("a deny keeps the warnings gathered before it", () => {
    const rules = [
      rule("w", "validate-guard", () => warn("heads up")),
      rule("d", "validate-guard", () => deny(422, "no", [], "fix it")),
    ];
    expect(decide("validate-guard", frozenEdit(), context([]), rules)).toEqual({
      allowed: false,
      rule: "d",
      status: { code: 422, reason: "Invalid", message: "no fix it (rule d)" },
      warnings: ["heads up"],
    });
  });

  it("mutations accumulate on one copy and become one diffed patch; a throwing mutation is dropped", () => {
    const rules = [
      rule("m1", "mutate", () =>
        mutate((o) => {
          o.metadata = { ...o.metadata, labels: { ...o.metadata?.labels, a: "1" } };
        }),
      ),
      rule("broken", "mutate", () =>
        mutate((o) => {
          o.metadata!.labels!.half = "done";
          throw new Error("boom");
        }),
      ),
      rule("m2", "mutate", () =>
        mutate((o) => {
          o.metadata!.labels!.b = "2";
        }),
      ),
    ];
    const object = capiMachine({ paused: "none" });
    const d = decide("mutate", createRequest(object), context([]), rules);
    expect(d.rule).toBe("m1");
    expect(d.patch?.map((op) => [op.op, op.path]).sort()).toEqual([
      ["add", "/metadata/labels/a"],
      ["add", "/metadata/labels/b"],
    ]);
    expect(object.metadata?.labels).not.toHaveProperty("a");
  });

  it("DELETE is never patched and validating webhooks never carry a patch", () => {
    const rules = [
      rule("m", "mutate", () =>
        mutate((o) => {
          o.spec = {};
        }),
      ),
    ];
    expect(decide("mutate", deleteRequest(capiMachine()), context([]), rules).patch).toBeUndefined();
    expect(decide("validate", createRequest(capiMachine()), context([mapiMachine()])).patch).toBeUndefined();
  });
});

describe("engine: totality", () => {
  const throwing: Rule = {
    id: "throws",
    webhook: "validate",
    reads: [],
    appliesTo: () => true,
    check: () => {
      throw new TypeError("cannot read properties of undefined");
    },
  };

  it("a rule that throws denies on validate with an internal-error message", () => {
    expect(decide("validate", frozenEdit(), context([]), [throwing])).toEqual({
      allowed: false,
      rule: "throws",
      status: {
        code: 403,
        reason: "Forbidden",
        message: "internal error evaluating rule throws; retry (rule throws)",
      },
      warnings: [],
    });
  });

  it("a rule that throws is skipped on the Ignore webhooks; the others still speak", () => {
    const rules: Rule[] = [
      { ...throwing, webhook: "validate-guard" },
      { ...throwing, id: "w", webhook: "validate-guard", check: () => warn("still here") },
    ];
    expect(decide("validate-guard", frozenEdit(), context([]), rules)).toEqual({
      allowed: true,
      rule: "w",
      warnings: ["still here"],
    });
    expect(
      decide("mutate", createRequest(capiMachine()), context([]), [{ ...throwing, webhook: "mutate" }]),
    ).toEqual({
      allowed: true,
      rule: "none",
      warnings: [],
    });
  });

  it("a converter that throws becomes an internal error of migration-unconvertible", () => {
    const m = mapiMachine();
    const request = updateRequest(
      m,
      edit(m, (d) => {
        d.spec.authoritativeAPI = "ClusterAPI";
      }),
    );
    const ctx = context([capiMachine()], {
      checkConvertible: () => {
        throw new Error("converter bug");
      },
    });
    expect(decide("validate", request, ctx).status?.message).toBe(
      "internal error evaluating rule migration-unconvertible; retry (rule migration-unconvertible)",
    );
  });

  it("a store that throws becomes an internal error, never an exception", () => {
    const ctx = context([]);
    const broken: PolicyContext = {
      ...ctx,
      view: {
        ...ctx.view,
        get: () => {
          throw new Error("cache closed");
        },
      },
    };
    const d = decide("validate", createRequest(awsMachine({ paused: "none" })), broken);
    expect(d).toMatchObject({ allowed: false, rule: "capi-create-paused" });
  });
});

describe("engine: warnings (SPEC §2.1: one line, ≤ 120 characters, kept by kube-apiserver)", () => {
  it("keeps short warnings as they are and cuts long ones to 120 characters", () => {
    expect(boundedWarning("short")).toBe("short");
    const long = "x".repeat(300);
    expect(boundedWarning(long)).toHaveLength(MAX_WARNING_LENGTH);
    expect(boundedWarning(long).endsWith("...")).toBe(true);
  });

  it("never splits a surrogate pair and never lets a newline into a header", () => {
    const emoji = `${"a".repeat(116)}😀😀😀`;
    const cut = boundedWarning(emoji);
    expect(cut.length).toBeLessThanOrEqual(MAX_WARNING_LENGTH);
    expect(cut).toBe(`${"a".repeat(116)}...`);
    expect(boundedWarning("line one\nline two\r\u0000")).toBe("line one line two");
  });

  it("replaces C1 control characters too: kube-apiserver drops a warning holding any (its NewWarningHeader refuses unicode.IsControl)", () => {
    expect(boundedWarning("name a\u0085b\u009fc\u0080")).toBe("name a b c");
    expect(boundedWarning("keeps \u00a0 and \u2028 inside")).toBe("keeps \u00a0 and \u2028 inside");
  });
});

describe("RULES", () => {
  it("holds every rule of SPEC §2.3/§2.4 exactly once, each on its webhook", () => {
    expect([...RULE_IDS].sort()).toEqual(
      [
        "mapi-frozen",
        "capi-frozen",
        "unpause-twin",
        "capi-create-paused",
        "capi-create-twin-paused",
        "mapi-create-twin",
        "capi-unsupported-fields",
        "aws-unsupported-fields",
        "openstack-unsupported-fields",
        "powervs-unsupported-fields",
        "authority-enum",
        "status-owned-by-controllers",
        "product-annotations",
        "migration-machine-busy",
        "migration-twin-not-ready",
        "migration-unsupported-owner",
        "migration-unconvertible",
        "frozen-while-migrating",
        "migration-not-synchronized",
        "delete-nonauthoritative-parent",
        "delete-authoritative-via-mirror",
        "orphan-ignored-by-capi",
        "cluster-delete-guard",
        "pause-new-capi",
      ].sort(),
    );
    const warnSide = [
      "migration-not-synchronized",
      "delete-nonauthoritative-parent",
      "delete-authoritative-via-mirror",
      "orphan-ignored-by-capi",
      "cluster-delete-guard",
    ];
    for (const r of RULES)
      expect(r.webhook).toBe(
        r.id === "pause-new-capi" ? "mutate" : warnSide.includes(r.id) ? "validate-guard" : "validate",
      );
  });

  it("ADMIN is an ordinary user", () => {
    expect(decide("validate", { ...frozenEdit(), userInfo: ADMIN }, context([])).allowed).toBe(false);
  });
});

describe("engine: crafted reviews are decided like any other, in linear time (SPEC §2.1, issue 20)", () => {
  /** `{a:{a:…{a: leaf}}}`, `depth` levels, built without recursion. */
  const nested = (depth: number, leaf: unknown): unknown => {
    let o: unknown = leaf;
    for (let i = 0; i < depth; i++) o = { a: o };
    return o;
  };
  const wide = (width: number, value: number) =>
    Object.fromEntries(Array.from({ length: width }, (_, i) => [`k${i}`, value]));
  const frozenWith = (before: unknown, after: unknown) => {
    const m = mapiMachine({ status: "ClusterAPI" });
    return updateRequest(
      edit(m, (d) => {
        d.spec.providerSpec.value.crafted = before;
      }),
      edit(m, (d) => {
        d.spec.providerSpec.value.crafted = after;
      }),
    );
  };

  it("the issue's review — providerSpec.value nested 3,000 deep, 4,000 changed values — is denied by mapi-frozen with a bounded message", () => {
    // Took 4–15 s before: every changed value's path was rebuilt from the root (4,000 × 6,000 characters).
    const d = decide(
      "validate",
      frozenWith(nested(3_000, wide(4_000, 1)), nested(3_000, wide(4_000, 2))),
      context([capiMachine()]),
    );
    expect(d).toMatchObject({ allowed: false, rule: "mapi-frozen" });
    const cut = `${`spec.providerSpec.value.crafted${".a".repeat(3_000)}`.slice(0, MAX_PATH_LENGTH)}…`;
    expect(d.status?.message).toContain(
      `(status.authoritativeAPI=ClusterAPI): ${cut} and 3999 more changed.`,
    );
    expect(d.status?.message.length).toBeLessThan(2 * MAX_PATH_LENGTH);
  });

  it("a providerSpec nested 100,000 deep is decided by its rule, not refused as an internal error", () => {
    const d = decide(
      "validate",
      frozenWith(nested(100_000, 1), nested(100_000, 2)),
      context([capiMachine()]),
    );
    expect(d).toMatchObject({ allowed: false, rule: "mapi-frozen" });
    expect(d.status?.message).not.toContain("internal error");
    const same = decide(
      "validate",
      frozenWith(nested(100_000, 1), nested(100_000, 1)),
      context([capiMachine()]),
    );
    expect(same).toMatchObject({ allowed: true });
  });

  it("the mutating webhook pauses a new CAPI Machine whose spec is 20,000 levels deep", () => {
    const object = edit(capiMachine({ paused: "none" }), (c) => {
      c.spec.crafted = nested(20_000, "x");
    });
    const d = decide("mutate", createRequest(object), context([mapiMachine()]));
    expect(d.rule).toBe("pause-new-capi");
    expect(d.patch?.map((op) => op.path)).toEqual([
      `/metadata/annotations/${ANNOTATIONS.paused.replace("/", "~1")}`,
      `/metadata/annotations/${ANNOTATIONS.pausedBy.replace("/", "~1")}`,
    ]);
  });

  it("prototype keys are field names: `constructor: null` and a missing key read the same, `__proto__` changes are seen", () => {
    const withSpec = (extra: string) =>
      JSON.parse(
        JSON.stringify(mapiMachine({ status: "ClusterAPI" })).replace('"spec":{', `"spec":{${extra}`),
      );
    const label = (m: KubeObject) =>
      edit(m, (d) => {
        d.metadata.labels.team = "blue";
      });
    const ctx = context([capiMachine()]);
    // An unprotected label edit, the spec's prototype keys as they were (or null on one side only).
    for (const [before, after] of [
      ['"constructor":null,', ""],
      [
        '"__proto__":{"a":1},"constructor":{"prototype":{"b":2}},',
        '"__proto__":{"a":1},"constructor":{"prototype":{"b":2}},',
      ],
    ] as const) {
      const d = decide("validate", updateRequest(withSpec(before), label(withSpec(after))), ctx);
      expect(d).toMatchObject({ allowed: true });
    }
    const changed = decide(
      "validate",
      updateRequest(withSpec('"__proto__":{"a":1},'), withSpec('"__proto__":{"a":2},')),
      ctx,
    );
    expect(changed.status?.message).toContain("spec.__proto__.a changed");
    expect(({} as Record<string, unknown>).a).toBeUndefined();
  });
});
