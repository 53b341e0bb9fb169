/**
 * Who is who in the bench cluster: the identities exempt from admission (as config.ts's default
 * `controllerUsers`), the product's service account whose writes item 3 counts, and the simulated providers'
 * accounts whose writes it excludes.
 */
export const PRODUCT_USER = "system:serviceaccount:openshift-cluster-api:machine-api-migration";

/** The simulated providers' accounts, by the short name the bench reports them under. */
export const PROVIDER_USERS: Readonly<Record<"mao" | "capi" | "capa", string>> = {
  mao: "system:serviceaccount:openshift-machine-api:machine-api-controllers",
  capi: "system:serviceaccount:openshift-cluster-api:capi-manager",
  capa: "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
};

export const CONTROLLER_USERS: readonly string[] = [
  PRODUCT_USER,
  ...Object.values(PROVIDER_USERS),
  "system:serviceaccount:kube-system:generic-garbage-collector",
  "system:serviceaccount:kube-system:namespace-controller",
];
