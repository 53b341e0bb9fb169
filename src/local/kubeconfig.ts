/**
 * Renders the kubeconfig local mode writes to `<state-dir>/kubeconfig`: one cluster (the embedded API
 * server, its CA inline) and one context per local user, `admin` current.
 */
import { stringify } from "yaml";
import type { LocalUser } from "./identities.js";

export function renderKubeconfig(
  server: string,
  caPem: string,
  users: readonly LocalUser[],
  adminNamespace: string,
  current = "admin",
): string {
  const cluster = "local";
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: cluster,
        cluster: { server, "certificate-authority-data": Buffer.from(caPem).toString("base64") },
      },
    ],
    users: users.map((u) => ({ name: u.context, user: { token: u.token } })),
    contexts: users.map((u) => ({
      name: u.context,
      context: { cluster, user: u.context, namespace: u.context === "admin" ? adminNamespace : undefined },
    })),
    "current-context": current,
    preferences: {},
  });
}
