/**
 * The name of the AWSMachineTemplate (any InfraMachineTemplate) made for a MAPI MachineSet (SPEC §4.3):
 * `<msName>-<8 lowercase hex>`, the hex being FNV-1a 32-bit over the canonical JSON of the template's
 * `spec.template.spec`. Content-addressed so a providerSpec change makes a new template (templates are
 * immutable in CAPI) and an unchanged one keeps its name across restarts.
 */
import { canonicalJson } from "../../kube/object.js";

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a 32-bit over the UTF-8 bytes of `text`. */
export const fnv1a32 = (text: string): number => {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash >>> 0;
};

export const templateHash = (templateSpec: unknown): string =>
  fnv1a32(canonicalJson(templateSpec)).toString(16).padStart(8, "0");

export const templateName = (machineSetName: string, templateSpec: unknown): string =>
  `${machineSetName}-${templateHash(templateSpec)}`;
