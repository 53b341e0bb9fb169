/**
 * A DELETE's options as kube-apiserver reads them (decision 126): from the body when there is one — the query
 * is then not read at all — else from the query; checked together (422); a body kube cannot decode is a 500
 * and deletes nothing. And the garbage collector's finalizers as kube sets them, on a second delete too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deleteOptionsFromBody,
  deleteOptionsFromQuery,
  deleteOptionsOf,
} from "../../src/apiserver/delete-options.js";
import type { ApiServer } from "../../src/apiserver/index.js";
import { finalizersFor } from "../../src/apiserver/rest/delete.js";
import { ApiError } from "../../src/apiserver/status.js";
import { allowAll, call, configMap, namespace, start } from "./helpers.js";

const refusal = (f: () => unknown): { code: number; reason: string; message: string } => {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return { code: e.code, reason: e.reason, message: e.message };
    throw e;
  }
  throw new Error("not refused");
};

describe("the options' source: the body when there is one, else the query", () => {
  it.each([
    ["a DeleteOptions body", '{"apiVersion":"v1","kind":"DeleteOptions"}', "?dryRun=All", {}],
    ["an empty object", "{}", "?dryRun=All&propagationPolicy=Foreground&gracePeriodSeconds=abc", {}],
    ["JSON null", "null", "?dryRun=All", {}],
    ["the body's own dry run", '{"dryRun":["All"]}', "", { dryRun: ["All"] }],
    ["no body", "", "?dryRun=All&propagationPolicy=Orphan", { dryRun: ["All"], propagationPolicy: "Orphan" }],
    ["no body, gracePeriodSeconds", "", "?gracePeriodSeconds=0", { gracePeriodSeconds: 0 }],
    ["field names are exact", '{"DryRun":["All"]}', "", {}],
    ["unknown fields are dropped", '{"bogus":1,"gracePeriodSeconds":null}', "", {}],
    ["another group version's DeleteOptions", '{"apiVersion":"apps/v1","kind":"DeleteOptions"}', "", {}],
  ])("%s", (_, body, query, want) => {
    expect(deleteOptionsOf(body, new URLSearchParams(query))).toEqual(want);
  });
});

describe("a body kube's decoder cannot read: 500 without a reason", () => {
  it.each([
    ["not JSON", "not json", /^couldn't get version\/kind; json parse error: /],
    ["a list", "[]", /cannot unmarshal array into Go value of type struct/],
    ["apiVersion a number", '{"apiVersion":1}', /cannot unmarshal number into Go struct field \.apiVersion/],
    [
      "another kind",
      '{"apiVersion":"v1","kind":"ConfigMap"}',
      /^no kind "ConfigMap" is registered for version "v1"/,
    ],
    [
      "gracePeriodSeconds a string",
      '{"gracePeriodSeconds":"abc"}',
      /^json: cannot unmarshal string into Go struct field DeleteOptions\.gracePeriodSeconds of type int64$/,
    ],
    [
      "gracePeriodSeconds a fraction",
      '{"gracePeriodSeconds":1.5}',
      /cannot unmarshal number 1\.5 into Go struct field DeleteOptions\.gracePeriodSeconds/,
    ],
    ["dryRun a string", '{"dryRun":"All"}', /DeleteOptions\.dryRun of type \[\]string$/],
    [
      "orphanDependents a string",
      '{"orphanDependents":"true"}',
      /DeleteOptions\.orphanDependents of type bool$/,
    ],
    [
      "a precondition's uid a number",
      '{"preconditions":{"uid":1}}',
      /Preconditions\.preconditions\.uid of type types\.UID$/,
    ],
  ])("%s", (_, body, message) => {
    const r = refusal(() => deleteOptionsFromBody(body));
    expect({ code: r.code, reason: r.reason }).toEqual({ code: 500, reason: "" });
    expect(r.message).toMatch(message);
  });
});

describe("kube's ValidateDeleteOptions: 422 on DeleteOptions", () => {
  it.each([
    [
      "orphanDependents with a propagationPolicy",
      '{"orphanDependents":true,"propagationPolicy":"Background"}',
    ],
    ["an unknown propagationPolicy", '{"propagationPolicy":"Sometimes"}'],
    ["an unknown dryRun value", '{"dryRun":["Some"]}'],
  ])("%s", (_, body) => {
    const r = refusal(() => deleteOptionsOf(body, new URLSearchParams()));
    expect({ code: r.code, reason: r.reason }).toEqual({ code: 422, reason: "Invalid" });
  });

  it("the query's integer that is not one is a 400 only when there is no body", () => {
    expect(refusal(() => deleteOptionsFromQuery(new URLSearchParams("gracePeriodSeconds=abc"))).code).toBe(
      400,
    );
    expect(deleteOptionsOf("{}", new URLSearchParams("gracePeriodSeconds=abc"))).toEqual({});
  });
});

describe("the garbage collector's finalizers after a delete (kube's deletionFinalizersForGarbageCollection)", () => {
  const HOLD = "example.com/hold";
  it.each([
    ["no options, none held", [HOLD], {}, [HOLD]],
    ["no options keep the one held", [HOLD, "orphan"], {}, [HOLD, "orphan"]],
    [
      "Foreground adds foregroundDeletion",
      [HOLD],
      { propagationPolicy: "Foreground" },
      [HOLD, "foregroundDeletion"],
    ],
    ["Orphan adds orphan", [], { propagationPolicy: "Orphan" }, ["orphan"]],
    ["orphanDependents adds orphan", [], { orphanDependents: true }, ["orphan"]],
    [
      "Background takes foregroundDeletion away",
      ["foregroundDeletion", HOLD],
      { propagationPolicy: "Background" },
      [HOLD],
    ],
    [
      "Foreground replaces orphan",
      ["orphan", HOLD],
      { propagationPolicy: "Foreground" },
      [HOLD, "foregroundDeletion"],
    ],
    [
      "orphanDependents=false takes both away",
      ["orphan", "foregroundDeletion"],
      { orphanDependents: false },
      [],
    ],
    ["the first GC finalizer held decides", ["foregroundDeletion", "orphan"], {}, ["foregroundDeletion"]],
    [
      "an unchanged set keeps its order",
      ["foregroundDeletion", HOLD],
      { propagationPolicy: "Foreground" },
      ["foregroundDeletion", HOLD],
    ],
  ] as const)("%s", (_, held, options, want) => {
    expect(finalizersFor({ metadata: { name: "x", finalizers: [...held] } }, options)).toEqual(want);
  });
});

describe("SPEC §8.1: on the local API server, as on kube-apiserver", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/d/configmaps";
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("d"));
  });
  afterAll(() => s.stop());

  it("?dryRun=All beside a body deletes for real, as kube-apiserver does", async () => {
    await call(s, "POST", CMS, configMap("with-body", "d"));
    const r = await call(s, "DELETE", `${CMS}/with-body?dryRun=All`, {
      apiVersion: "v1",
      kind: "DeleteOptions",
    });
    expect(r.status).toBe(200);
    expect((await call(s, "GET", `${CMS}/with-body`)).status).toBe(404);
  });

  it("?dryRun=All without a body keeps the object", async () => {
    await call(s, "POST", CMS, configMap("no-body", "d"));
    expect((await call(s, "DELETE", `${CMS}/no-body?dryRun=All`)).status).toBe(200);
    expect((await call(s, "GET", `${CMS}/no-body`)).status).toBe(200);
  });

  it.each([
    ["a body of another kind", { apiVersion: "v1", kind: "ConfigMap" }, 500],
    ["dryRun a string", { dryRun: "All" }, 500],
    [
      "orphanDependents with a propagationPolicy",
      { orphanDependents: true, propagationPolicy: "Background" },
      422,
    ],
  ])("%s: refused, nothing deleted", async (_, body, code) => {
    const name = `refused-${code}-${Object.keys(body).join("-").toLowerCase()}`;
    await call(s, "POST", CMS, configMap(name, "d"));
    expect((await call(s, "DELETE", `${CMS}/${name}?dryRun=All`, body)).status).toBe(code);
    expect((await call(s, "GET", `${CMS}/${name}`)).status).toBe(200);
  });

  it("a deletecollection with a body and ?dryRun=All deletes for real", async () => {
    await call(s, "POST", CMS, configMap("coll", "d", {}, { set: "coll" }));
    const r = await call(s, "DELETE", `${CMS}?labelSelector=set%3Dcoll&dryRun=All`, {});
    expect(r.status).toBe(200);
    expect((await call(s, "GET", `${CMS}/coll`)).status).toBe(404);
  });

  it("a Foreground delete of a terminating object answers it with foregroundDeletion added", async () => {
    await call(s, "POST", CMS, {
      ...configMap("held", "d"),
      metadata: { name: "held", namespace: "d", finalizers: ["example.com/hold"] },
    });
    await call(s, "DELETE", `${CMS}/held`);
    // (The local garbage collector then takes it away again: nothing depends on the ConfigMap.)
    const fg = await call(s, "DELETE", `${CMS}/held?propagationPolicy=Foreground`);
    expect(fg.body.metadata.finalizers).toEqual(["example.com/hold", "foregroundDeletion"]);
  });

  it("an explicit Background delete takes away an orphan finalizer: nothing else holds it, so it is gone", async () => {
    await call(s, "POST", CMS, {
      ...configMap("orphaned", "d"),
      metadata: { name: "orphaned", namespace: "d", finalizers: ["orphan"] },
    });
    const r = await call(s, "DELETE", `${CMS}/orphaned?propagationPolicy=Background`);
    expect(r.body.kind).toBe("Status");
    expect((await call(s, "GET", `${CMS}/orphaned`)).status).toBe(404);
  });
});
