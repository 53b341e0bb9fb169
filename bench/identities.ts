/**
 * Who is who in the bench cluster: the identities exempt from admission (as config.ts's default
 * `controllerUsers`), the product's service account whose writes item 3 counts, and the simulated providers'
 * accounts whose writes it excludes.
 */
export const PRODUCT_USER = "system:serviceaccount:openshift-cluster-api:machine-api-migration";

export const CONTROLLER_USERS: readonly string[] = [
  PRODUCT_USER,
  "system:serviceaccount:openshift-machine-api:machine-api-controllers",
  "system:serviceaccount:openshift-cluster-api:capi-manager",
  "system:serviceaccount:openshift-cluster-api:capa-controller-manager",
  "system:serviceaccount:kube-system:generic-garbage-collector",
  "system:serviceaccount:kube-system:namespace-controller",
];
