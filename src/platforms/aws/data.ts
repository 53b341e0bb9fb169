/**
 * AWS facts more than one layer reads, as plain data with no imports: the provider defaults the converter
 * writes out explicitly, the AWSMachine fields the MAPI providerSpec cannot represent (SPEC §2.3, read by
 * the admission rule `aws-unsupported-fields`, the converter's tests and the converter's error hint) and
 * the provider config kinds. The conversion itself is in table.ts; nothing here converts.
 */

/** Infrastructure `status.platformStatus.type` of this platform. */
export const AWS_PLATFORM = "AWS";

/** `providerSpec.value.kind` of an AWS Machine. */
export const PROVIDER_CONFIG_KIND = "AWSMachineProviderConfig";

/** `status.providerStatus.kind` of an AWS Machine. */
export const PROVIDER_STATUS_KIND = "AWSMachineProviderStatus";

/**
 * Every value the converter writes although the source did not say it (SPEC §5.3 "write the provider's
 * default explicitly"). A server or controller that defaults these fields then holds exactly what we wrote.
 */
export const AWS_PROVIDER_DEFAULTS = Object.freeze({
  /** `hostAffinity` when `placement.host` is absent or `AnyAvailable`. */
  hostAffinity: "default",
  /** `instanceMetadataOptions` besides `httpTokens`, always written; CAPI → MAPI refuses anything else. */
  instanceMetadataOptions: Object.freeze({
    httpEndpoint: "enabled",
    httpProtocolIpv6: "disabled",
    instanceMetadataTags: "disabled",
    httpPutResponseHopLimit: 1,
  }),
  /** `httpTokens` when `metadataServiceOptions.authentication` is "" or absent. */
  httpTokens: "optional",
  /** `size` of a volume whose `ebs.volumeSize` is unset (GiB). */
  volumeSize: 120,
  /** `rootVolume` when the providerSpec has no root block device. */
  rootVolume: Object.freeze({}),
  /** `subnet` when the providerSpec has none (MAPI's subnet is a non-pointer struct, so `{}` both ways). */
  subnet: Object.freeze({}),
  /** `ignition.storageType`: OpenShift user data is an Ignition pointer config, small and not secret. */
  ignitionStorageType: "UnencryptedUserData",
  /** The only `credentialsSecret` MAPI → CAPI accepts, and the one CAPI → MAPI writes. */
  credentialsSecretName: "aws-cloud-credentials",
  /** Infrastructure `ipFamily` when unset (openshift/api's default). */
  ipFamily: "IPv4",
  /**
   * What a dual-stack cluster's machines get (SPEC §5.3 additions; decision 66): MAPI has no field for
   * either, so both are derived from the Infrastructure's IP family and CAPI → MAPI accepts only these.
   */
  dualStack: Object.freeze({
    privateDnsName: Object.freeze({
      enableResourceNameDnsAAAARecord: true,
      enableResourceNameDnsARecord: true,
      hostnameType: "resource-name",
    }),
    assignPrimaryIPv6: "enabled",
  }),
});

/** Infrastructure IP families that are dual-stack. */
export const DUAL_STACK_IP_FAMILIES: readonly string[] = Object.freeze([
  "DualStackIPv4Primary",
  "DualStackIPv6Primary",
]);

/**
 * AWSMachine spec fields (dotted, relative to the spec) the MAPI providerSpec has no place for (SPEC §2.3).
 * Admission refuses a request that sets one; the converter refuses every field its table does not know,
 * these included, with the rule's name in the message.
 */
export const AWS_UNSUPPORTED_FIELDS = Object.freeze([
  "ami.eksLookupType",
  "imageLookupFormat",
  "imageLookupOrg",
  "imageLookupBaseOS",
  "networkInterfaces",
  "uncompressedUserData",
  "ignition.proxy",
  "ignition.tls",
  "securityGroupOverrides",
  "cloudInit.secretCount",
  "cloudInit.secretPrefix",
  "cloudInit.insecureSkipSecretsManager",
  "cloudInit.secureSecretsBackend",
] as const);

export type AwsUnsupportedField = (typeof AWS_UNSUPPORTED_FIELDS)[number];
