/**
 * The users of local mode (SPEC §8, §1.1): the admin a person uses with kubectl, the product's own service
 * account, and the identities of the controllers the simulated providers stand in for. Tokens are random per
 * start and only ever written to the kubeconfig in the state directory.
 */
import { randomBytes } from "node:crypto";

export interface LocalUser {
  /** Kubeconfig user/context name. */
  context: string;
  username: string;
  groups: string[];
  token: string;
}

const serviceAccount = (namespace: string, name: string, context: string): Omit<LocalUser, "token"> => ({
  context,
  username: `system:serviceaccount:${namespace}:${name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
});

export function localUsers(ns: { mapiNamespace: string; capiNamespace: string }): LocalUser[] {
  const token = () => randomBytes(24).toString("base64url");
  return [
    { context: "admin", username: "kube:admin", groups: ["system:cluster-admins", "system:authenticated"] },
    serviceAccount(ns.capiNamespace, "machine-api-migration", "controller"),
    serviceAccount(ns.mapiNamespace, "machine-api-controllers", "mao"),
    serviceAccount(ns.capiNamespace, "capi-manager", "capi"),
    serviceAccount(ns.capiNamespace, "capa-controller-manager", "capa"),
    serviceAccount(ns.capiNamespace, "capo-manager", "capo"),
    // CAPIBM's manager (cluster-api-provider-ibmcloud, the PowerVS demo), as OpenShift names its account.
    serviceAccount(ns.capiNamespace, "capi-ibmcloud-manager", "capibm"),
    // The cluster autoscaler (SPEC §2.2): tests scale MAPI MachineSets through `scale` as it does.
    serviceAccount(ns.mapiNamespace, "cluster-autoscaler", "autoscaler"),
    // Installer mode runs under its own, more privileged identity (SPEC §6).
    serviceAccount(ns.capiNamespace, "machine-api-migration-installer", "installer"),
  ].map((u) => ({ ...u, token: token() }));
}
