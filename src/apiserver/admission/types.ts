/**
 * The admission dispatcher's contract with the local API server's core (SPEC §8): the attributes of one
 * request and the outcome of running the registered webhooks over it.
 */
import type { KubeObject } from "../../kube/object.js";
import type { StatusDetails } from "../status.js";

export interface AdmissionAttributes {
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name: string;
  namespace?: string;
  namespaceLabels?: Record<string, string>;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  userInfo: { username: string; uid?: string; groups: string[] };
  dryRun: boolean;
  options: Record<string, unknown> | null;
}

export type AdmissionOutcome =
  | { allowed: true; object: KubeObject | null; warnings: string[] }
  | {
      allowed: false;
      status: { code: number; reason: string; message: string; details?: StatusDetails };
      warnings: string[];
    };

export interface AdmissionDispatcher {
  mutate(a: AdmissionAttributes): Promise<AdmissionOutcome>;
  validate(a: AdmissionAttributes): Promise<AdmissionOutcome>;
  /** Optional extra: closes the keep-alive connections of every cached webhook client (tests, shutdown). */
  close?(): void;
}
