/**
 * Decision 133: a PUT must name its object in the body. kube-apiserver's update handler reads the name from
 * the decoded object and refuses one without it (400 "undeterminable"), before any precondition; the local
 * server used to take the URL's name (a ConfigMap replaced, a custom resource refused for its missing
 * resourceVersion instead).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { allowAll, call, configMap, namespace, start, WIDGETS, widget, widgetCrd } from "./helpers.js";

describe("SPEC §8.1: a PUT without the object's name, as on kube-apiserver", () => {
  let s: ApiServer;
  const CMS = "/api/v1/namespaces/p/configmaps";
  const undeterminable = (name: string) =>
    `the name of the object (${name} based on URL) was undeterminable: name must be provided`;
  beforeAll(async () => {
    s = await start({ admission: allowAll });
    await call(s, "POST", "/api/v1/namespaces", namespace("p"));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    await call(s, "POST", CMS, configMap("c", "p", { a: "1" }));
    await call(s, "POST", WIDGETS("p"), widget("w", "p"));
  });
  afterAll(() => s.stop());

  it.each([
    ["metadata without a name", { metadata: {} }],
    ["no metadata at all", {}],
    ["an empty name", { metadata: { name: "" } }],
    ["a null name", { metadata: { name: null } }],
  ])("a ConfigMap with %s: 400, and the stored one is unchanged", async (_, meta) => {
    const r = await call(s, "PUT", `${CMS}/c`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      data: { a: "2" },
      ...meta,
    });
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe("BadRequest");
    expect(r.body.message).toBe(undeterminable("c"));
    expect((await call(s, "GET", `${CMS}/c`)).body.data).toEqual({ a: "1" });
  });

  it("a custom resource without a name: the same 400, not the resourceVersion's 422", async () => {
    const live = (await call(s, "GET", `${WIDGETS("p")}/w`)).body;
    const r = await call(s, "PUT", `${WIDGETS("p")}/w`, { ...live, metadata: {} });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(undeterminable("w"));
  });

  it("a status PUT without a name: the same 400", async () => {
    const live = (await call(s, "GET", `${WIDGETS("p")}/w`)).body;
    const r = await call(s, "PUT", `${WIDGETS("p")}/w/status`, {
      ...live,
      metadata: { resourceVersion: "1" },
    });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(undeterminable("w"));
  });

  it("a PUT naming its object still updates it", async () => {
    const live = (await call(s, "GET", `${CMS}/c`)).body;
    const r = await call(s, "PUT", `${CMS}/c`, { ...live, data: { a: "3" } });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ a: "3" });
  });
});
