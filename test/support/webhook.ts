/**
 * A validating admission webhook as an organisation would run its own: HTTPS on 127.0.0.1 with a CA of its
 * own, answering each AdmissionReview by a rule the test gives. Refusals are 403 with the rule's message.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { createCertificateAuthority, issueServingCertificate } from "../../src/server/certs.js";

/** The fields of an AdmissionReview's request the tests decide on. */
export interface ReviewRequest {
  uid?: string;
  name?: string;
  object?: { metadata?: { name?: string }; spec?: Record<string, unknown> };
  oldObject?: { metadata?: { name?: string }; spec?: Record<string, unknown> };
}

export interface ValidatingWebhook {
  server: Server;
  /** The URL for a webhook configuration's clientConfig.url. */
  url: string;
  /** The CA for clientConfig.caBundle, base64 PEM. */
  caBundle: string;
  /** Drops open connections and closes the server. */
  close(): Promise<void>;
}

/** Starts the webhook: `refusal` answers a request with the message to refuse it with, or undefined to allow. */
export const startValidatingWebhook = async (
  caName: string,
  refusal: (request: ReviewRequest) => string | undefined,
): Promise<ValidatingWebhook> => {
  const ca = createCertificateAuthority(caName);
  const serving = issueServingCertificate(ca, ["127.0.0.1"]);
  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const request: ReviewRequest = review.request ?? {};
      const message = refusal(request);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: {
            uid: request.uid,
            allowed: message === undefined,
            ...(message === undefined ? {} : { status: { code: 403, message } }),
          },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `https://127.0.0.1:${port}/validate`,
    caBundle: Buffer.from(ca.certPem).toString("base64"),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
};
