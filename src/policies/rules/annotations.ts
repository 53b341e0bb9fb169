/**
 * `product-annotations` (SPEC §0, §2.3): the product's own `machine-api-migration.openshift.io/*`
 * annotations (pause marker, `paused-false-at`, `needs-attention`) are the controllers' bookkeeping; users
 * may not add, change or remove them — except `confirm-delete`, which is how a user confirms a delete. On
 * CREATE of a CAPI object the pause marker next to the pause annotation is what the mutating webhook adds
 * (SPEC §2.4), and the validating webhook cannot tell who wrote it, so that one pair is admitted.
 */
import { ANNOTATIONS, PRODUCT_PREFIX } from "../../kube/kinds.js";
import { isPausedWithMarker } from "../../protocol/pause.js";
import { keyChanges, listPaths } from "../compare.js";
import { annotationPath, isProductAnnotation, readAnnotations } from "../keys.js";
import { describeSubject, matches, subjectFor } from "../subject.js";
import { allow, deny, type Rule } from "../verdict.js";

export const productAnnotations: Rule = {
  id: "product-annotations",
  webhook: "validate",
  reads: [],
  appliesTo: (request, ctx) => matches(request, ctx.subject, { operations: ["CREATE", "UPDATE"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const before = request.operation === "UPDATE" ? readAnnotations(request.oldObject ?? undefined) : {};
    const after = readAnnotations(request.object ?? undefined);
    const markedPause =
      request.operation === "CREATE" &&
      subject.api === "capi" &&
      isPausedWithMarker(request.object ?? undefined);
    const changes = keyChanges(before, after, isProductAnnotation).filter(
      ({ key }) => key !== ANNOTATIONS.confirmDelete && !(markedPause && key === ANNOTATIONS.pausedBy),
    );
    if (changes.length === 0) return allow();
    const paths = changes.map((c) => annotationPath(c.key));
    const what = listPaths(changes.map((c) => `${annotationPath(c.key)} ${c.change}`));
    return deny(
      403,
      `${describeSubject(subject)}: ${what}: ${PRODUCT_PREFIX}/* annotations are written only by the machine-api-migration controllers.`,
      paths,
      `Leave them as they are; the only one users set is ${ANNOTATIONS.confirmDelete}: "true".`,
    );
  },
};
