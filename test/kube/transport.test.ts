/**
 * The HTTP transport's credentials: resolved from the kubeconfig once and reused (client-node re-reads files
 * and builds an agent on every call), and dropped on a 401 so a rotated token is used on the next request.
 */
import { getEventListeners } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { UnauthorizedError } from "../../src/kube/errors.js";
import { kubeConfigTransport } from "../../src/kube/transport.js";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A server that answers 200 to `Bearer <accepted>` and 401 to anything else, recording what it saw. */
async function tokenServer(accepted: { token: string }) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization ?? "";
    seen.push(auth);
    const ok = auth === `Bearer ${accepted.token}`;
    res.writeHead(ok ? 200 : 401, { "Content-Type": "application/json" });
    res.end(
      JSON.stringify(
        ok
          ? { kind: "ConfigMap", apiVersion: "v1", metadata: { name: "x" } }
          : { kind: "Status", apiVersion: "v1", status: "Failure", code: 401, reason: "Unauthorized" },
      ),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: "c",
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: "u", token: accepted.token }],
    contexts: [{ name: "ctx", cluster: "c", user: "u" }],
    currentContext: "ctx",
  });
  return { seen, kubeConfig };
}

const get = { method: "GET", path: "/api/v1/namespaces/ns/configmaps/x" } as const;

describe("transport credentials", () => {
  it("are resolved from the kubeconfig once and reused by the following requests", async () => {
    const { seen, kubeConfig } = await tokenServer({ token: "t1" });
    const resolve = vi.spyOn(kubeConfig, "applyToHTTPSOptions");
    const transport = kubeConfigTransport(kubeConfig);
    for (let i = 0; i < 3; i++) await transport.request(get);
    expect(seen).toEqual(["Bearer t1", "Bearer t1", "Bearer t1"]);
    expect(resolve).toHaveBeenCalledTimes(1);
  });

  it("are dropped on a 401, so the next request carries the rotated token", async () => {
    const accepted = { token: "t1" };
    const { seen, kubeConfig } = await tokenServer(accepted);
    const transport = kubeConfigTransport(kubeConfig);
    await transport.request(get);
    // The token rotates: the server now accepts only t2, and the kubeconfig's user holds t2.
    accepted.token = "t2";
    (kubeConfig.getCurrentUser() as { token?: string }).token = "t2";
    await expect(transport.request(get)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(transport.request(get)).resolves.toMatchObject({ kind: "ConfigMap" });
    expect(seen).toEqual(["Bearer t1", "Bearer t1", "Bearer t2"]);
  });
});

describe("transport cancellation", () => {
  it("a request done leaves no listener on its signal (an informer's pages share one for a whole relist)", async () => {
    const { kubeConfig } = await tokenServer({ token: "t1" });
    const transport = kubeConfigTransport(kubeConfig);
    const controller = new AbortController();
    // A relist of 5,000 Machines is ten or more pages on one signal: each page's listener used to stay on it
    // until the signal was dropped (Node warned at the eleventh).
    for (let i = 0; i < 12; i++) await transport.request({ ...get, signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("a closed stream leaves no listener on its signal", async () => {
    const { kubeConfig } = await tokenServer({ token: "t1" });
    const transport = kubeConfigTransport(kubeConfig);
    const controller = new AbortController();
    for (let i = 0; i < 3; i++) {
      const stream = await transport.stream({ ...get, signal: controller.signal });
      for await (const _ of stream) {
        // one JSON line, then the answer ends
      }
      stream.close();
    }
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
