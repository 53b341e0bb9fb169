/**
 * Table tests for the field, status and annotation rules (SPEC §2.3): `capi-unsupported-fields`,
 * `aws-unsupported-fields`, `openstack-unsupported-fields` and `powervs-unsupported-fields` (one per platform,
 * SPEC §0, §5.5),
 * `authority-enum`, `status-owned-by-controllers`, `product-annotations`.
 */
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import { OPENSTACK_UNSUPPORTED_FIELDS } from "../../src/platforms/openstack/data.js";
import { POWERVS_UNSUPPORTED_FIELDS } from "../../src/platforms/powervs/data.js";
import { PLATFORMS } from "../../src/platforms/registry.js";
import { AWS_UNSUPPORTED, UNSUPPORTED_FIELDS_BY_PLATFORM } from "../../src/policies/rules/fields.js";
import { RULES } from "../../src/policies/rules/index.js";
import { newIssues } from "../../src/sync/conversion/types.js";
import {
  awsMachine,
  awsMachineTemplate,
  type Case,
  capiMachine,
  capiMachineSet,
  checkCase,
  createRequest,
  edit,
  ibmPowerVSMachine,
  ibmPowerVSMachineTemplate,
  mapiMachine,
  mapiMachineSet,
  openStackMachine,
  openStackMachineTemplate,
  statusRequest,
  updateRequest,
} from "./builders.js";

/** Sets a dotted path on a draft object. */
// biome-ignore lint/suspicious/noExplicitAny: tests reach into arbitrary JSON
const setPath = (o: any, path: string[], value: unknown): void => {
  let cur = o;
  for (const seg of path.slice(0, -1)) cur = cur[seg] ??= {};
  cur[path[path.length - 1]!] = value;
};

describe("capi-unsupported-fields", () => {
  const cases: Case[] = [
    {
      name: "capi-unsupported-fields: denies spec.version on a new CAPI Machine",
      request: createRequest(
        edit(capiMachine({ name: "capi-only", paused: "none" }), (c) => {
          c.spec.version = "v1.31.0";
        }),
      ),
      allowed: false,
      rule: "capi-unsupported-fields",
      message:
        "CAPI Machine openshift-cluster-api/capi-only: spec.version: Forbidden: Machine API cannot represent this field. Remove it from the manifest (or oc edit machines.cluster.x-k8s.io/capi-only -n openshift-cluster-api); the Machine API copy could not be kept in sync otherwise. (rule capi-unsupported-fields)",
    },
    {
      name: "capi-unsupported-fields: denies readinessGates under spec.template.spec of a CAPI MachineSet update",
      request: updateRequest(
        capiMachineSet({ paused: "none" }),
        edit(capiMachineSet({ paused: "none" }), (c) => {
          c.spec.template.spec.readinessGates = [{ conditionType: "Example" }];
        }),
      ),
      objects: [mapiMachineSet({ status: "ClusterAPI" })],
      allowed: false,
      rule: "capi-unsupported-fields",
      message: /: spec\.template\.spec\.readinessGates: Forbidden/,
    },
    {
      name: "capi-unsupported-fields: allows removing a finalizer from a Machine that already carries spec.version",
      request: updateRequest(
        edit(capiMachine({ name: "capi-only", paused: "none" }), (c) => {
          c.spec.version = "v1.31.0";
        }),
        edit(capiMachine({ name: "capi-only", paused: "none" }), (c) => {
          c.spec.version = "v1.31.0";
          c.metadata.finalizers = [];
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "capi-unsupported-fields: allows a CAPI Machine without them",
      request: createRequest(capiMachine({ name: "capi-only", paused: "none" })),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("aws-unsupported-fields", () => {
  const value = (field: string): unknown =>
    field.endsWith("secretCount")
      ? 2
      : field.endsWith("SkipSecretsManager") || field === "uncompressedUserData"
        ? true
        : field === "networkInterfaces"
          ? ["eni-1"]
          : field.startsWith("ignition.")
            ? { x: "y" }
            : "custom";
  const each: Case[] = AWS_UNSUPPORTED.map((field) => ({
    name: `aws-unsupported-fields: denies ${field} on a new AWSMachine`,
    request: createRequest(
      edit(awsMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
        setPath(a, ["spec", ...field.split(".")], value(field));
      }),
    ),
    allowed: false,
    rule: "aws-unsupported-fields",
    message: `AWSMachine openshift-cluster-api/capi-only: spec.${field}: Forbidden: the Machine API providerSpec cannot represent this field. Remove it from the manifest (or oc edit awsmachines.infrastructure.cluster.x-k8s.io/capi-only -n openshift-cluster-api); the Machine API copy could not be kept in sync otherwise. (rule aws-unsupported-fields)`,
  }));
  const cases: Case[] = [
    ...each,
    {
      name: "aws-unsupported-fields: denies several fields of an AWSMachineTemplate at once",
      request: createRequest(
        edit(awsMachineTemplate({ machineSet: null }), (t) => {
          t.spec.template.spec.imageLookupOrg = "123456789012";
          t.spec.template.spec.securityGroupOverrides = { node: "sg-1" };
        }),
      ),
      allowed: false,
      rule: "aws-unsupported-fields",
      message:
        /: spec\.template\.spec\.imageLookupOrg, spec\.template\.spec\.securityGroupOverrides: Forbidden: the Machine API providerSpec cannot represent these fields\./,
    },
    // SPEC §2.3: "present means present, an empty object {} included (the converter refuses it too)".
    ...(["ignition.proxy", "ignition.tls"] as const).map(
      (field): Case => ({
        name: `aws-unsupported-fields: denies an empty ${field} {} on a new AWSMachine`,
        request: createRequest(
          edit(awsMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
            setPath(a, ["spec", ...field.split(".")], {});
          }),
        ),
        allowed: false,
        rule: "aws-unsupported-fields",
        message: new RegExp(`: spec\\.${field.replace(".", "\\.")}: Forbidden: the Machine API providerSpec`),
      }),
    ),
    {
      name: "aws-unsupported-fields: denies an empty ignition.tls {} added to an AWSMachineTemplate",
      request: updateRequest(
        awsMachineTemplate({ machineSet: null }),
        edit(awsMachineTemplate({ machineSet: null }), (t) => {
          setPath(t, ["spec", "template", "spec", "ignition", "tls"], {});
        }),
      ),
      allowed: false,
      rule: "aws-unsupported-fields",
      message: /: spec\.template\.spec\.ignition\.tls: Forbidden/,
    },
    {
      name: "aws-unsupported-fields: denies uncompressedUserData false and secretCount 0 (present is present)",
      request: createRequest(
        edit(awsMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          setPath(a, ["spec", "uncompressedUserData"], false);
          setPath(a, ["spec", "cloudInit", "secretCount"], 0);
        }),
      ),
      allowed: false,
      rule: "aws-unsupported-fields",
      message: /: spec\.uncompressedUserData, spec\.cloudInit\.secretCount: Forbidden/,
    },
    {
      name: "aws-unsupported-fields: allows an update that leaves an existing empty ignition.proxy {} alone",
      request: updateRequest(
        edit(awsMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          setPath(a, ["spec", "ignition", "proxy"], {});
        }),
        edit(awsMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          setPath(a, ["spec", "ignition", "proxy"], {});
          a.metadata.finalizers = [];
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "aws-unsupported-fields: allows an AWSMachine without them",
      request: createRequest(awsMachine({ name: "capi-only", owner: null, paused: "none" })),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("openstack-unsupported-fields", () => {
  const value = (field: string): unknown =>
    field === "schedulerHintAdditionalProperties"
      ? [{ name: "different_host", value: { type: "String", string: "worker-b" } }]
      : field === "floatingIPPoolRef"
        ? { apiGroup: "ipam.cluster.x-k8s.io", kind: "InClusterIPPool", name: "external" }
        : field === "image.imageRef"
          ? { name: "rhcos-4.17" }
          : field === "identityRef.region"
            ? "RegionTwo"
            : field === "image.id"
              ? "0d6c5e4f-3b2a-4c1d-9e8f-7a6b5c4d3e2f"
              : "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b";
  const each: Case[] = OPENSTACK_UNSUPPORTED_FIELDS.map((field) => ({
    name: `openstack-unsupported-fields: denies ${field} on a new OpenStackMachine`,
    request: createRequest(
      edit(openStackMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
        setPath(a, ["spec", ...field.split(".")], value(field));
      }),
    ),
    allowed: false,
    rule: "openstack-unsupported-fields",
    message: `OpenStackMachine openshift-cluster-api/capi-only: spec.${field}: Forbidden: the Machine API providerSpec cannot represent this field. Remove it from the manifest (or oc edit openstackmachines.infrastructure.cluster.x-k8s.io/capi-only -n openshift-cluster-api); the Machine API copy could not be kept in sync otherwise. (rule openstack-unsupported-fields)`,
  }));
  const cases: Case[] = [
    ...each,
    {
      name: "openstack-unsupported-fields: denies several fields of an OpenStackMachineTemplate at once (under spec.template.spec)",
      request: createRequest(
        edit(openStackMachineTemplate({ machineSet: null }), (t) => {
          t.spec.template.spec.flavorID = "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b";
          t.spec.template.spec.identityRef.region = "RegionTwo";
        }),
      ),
      allowed: false,
      rule: "openstack-unsupported-fields",
      message:
        "OpenStackMachineTemplate openshift-cluster-api/ci-abc12-worker-us-east-1a-1a2b3c4d: spec.template.spec.flavorID, spec.template.spec.identityRef.region: Forbidden: the Machine API providerSpec cannot represent these fields. Remove them from the manifest (or oc edit openstackmachinetemplates.infrastructure.cluster.x-k8s.io/ci-abc12-worker-us-east-1a-1a2b3c4d -n openshift-cluster-api); the Machine API copy could not be kept in sync otherwise. (rule openstack-unsupported-fields)",
    },
    {
      name: "openstack-unsupported-fields: denies an image.id added to an OpenStackMachineTemplate",
      request: updateRequest(
        openStackMachineTemplate({ machineSet: null }),
        edit(openStackMachineTemplate({ machineSet: null }), (t) => {
          t.spec.template.spec.image = { id: "0d6c5e4f-3b2a-4c1d-9e8f-7a6b5c4d3e2f" };
        }),
      ),
      allowed: false,
      rule: "openstack-unsupported-fields",
      message: /: spec\.template\.spec\.image\.id: Forbidden: the Machine API providerSpec/,
    },
    {
      name: "openstack-unsupported-fields: denies an empty floatingIPPoolRef {} (present is present)",
      request: createRequest(
        edit(openStackMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.floatingIPPoolRef = {};
        }),
      ),
      allowed: false,
      rule: "openstack-unsupported-fields",
      message: /: spec\.floatingIPPoolRef: Forbidden/,
    },
    {
      name: "openstack-unsupported-fields: allows an update that leaves an existing flavorID alone",
      request: updateRequest(
        edit(openStackMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.flavorID = "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b";
        }),
        edit(openStackMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.flavorID = "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b";
          a.metadata.finalizers = [];
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "openstack-unsupported-fields: allows an OpenStackMachine without them",
      request: createRequest(openStackMachine({ name: "capi-only", owner: null, paused: "none" })),
      allowed: true,
      rule: "none",
    },
    {
      name: "openstack-unsupported-fields: allows an OpenStackMachineTemplate without them",
      request: createRequest(openStackMachineTemplate({ machineSet: null })),
      allowed: true,
      rule: "none",
    },
    {
      name: "aws-unsupported-fields: judges AWS kinds only (an AWS field name on an OpenStackMachine is not its business)",
      request: createRequest(
        edit(openStackMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.imageLookupOrg = "123456789012";
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "openstack-unsupported-fields: judges OpenStack kinds only (an OpenStack field name on an AWSMachine is not its business)",
      request: createRequest(
        edit(awsMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.flavorID = "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b";
        }),
      ),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("powervs-unsupported-fields", () => {
  // CAPIBM's imageRef names an IBMPowerVSImage object; the MAPI providerSpec names images only.
  const value = (_field: string): unknown => ({ name: "rhcos-ci-abc12-image" });
  const each: Case[] = POWERVS_UNSUPPORTED_FIELDS.map((field) => ({
    name: `powervs-unsupported-fields: denies ${field} on a new IBMPowerVSMachine`,
    request: createRequest(
      edit(ibmPowerVSMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
        setPath(a, ["spec", ...field.split(".")], value(field));
      }),
    ),
    allowed: false,
    rule: "powervs-unsupported-fields",
    message: `IBMPowerVSMachine openshift-cluster-api/capi-only: spec.${field}: Forbidden: the Machine API providerSpec cannot represent this field. Remove it from the manifest (or oc edit ibmpowervsmachines.infrastructure.cluster.x-k8s.io/capi-only -n openshift-cluster-api); the Machine API copy could not be kept in sync otherwise. (rule powervs-unsupported-fields)`,
  }));
  const cases: Case[] = [
    ...each,
    {
      name: "powervs-unsupported-fields: denies imageRef on an IBMPowerVSMachineTemplate (under spec.template.spec)",
      request: createRequest(
        edit(ibmPowerVSMachineTemplate({ machineSet: null }), (t) => {
          delete t.spec.template.spec.image;
          t.spec.template.spec.imageRef = { name: "rhcos-ci-abc12-image" };
        }),
      ),
      allowed: false,
      rule: "powervs-unsupported-fields",
      message:
        "IBMPowerVSMachineTemplate openshift-cluster-api/ci-abc12-worker-us-east-1a-1a2b3c4d: spec.template.spec.imageRef: Forbidden: the Machine API providerSpec cannot represent this field. Remove it from the manifest (or oc edit ibmpowervsmachinetemplates.infrastructure.cluster.x-k8s.io/ci-abc12-worker-us-east-1a-1a2b3c4d -n openshift-cluster-api); the Machine API copy could not be kept in sync otherwise. (rule powervs-unsupported-fields)",
    },
    {
      name: "powervs-unsupported-fields: denies an imageRef added to an IBMPowerVSMachineTemplate",
      request: updateRequest(
        ibmPowerVSMachineTemplate({ machineSet: null }),
        edit(ibmPowerVSMachineTemplate({ machineSet: null }), (t) => {
          t.spec.template.spec.imageRef = { name: "rhcos-ci-abc12-image" };
        }),
      ),
      allowed: false,
      rule: "powervs-unsupported-fields",
      message: /: spec\.template\.spec\.imageRef: Forbidden: the Machine API providerSpec/,
    },
    {
      name: "powervs-unsupported-fields: denies an empty imageRef {} (present is present)",
      request: createRequest(
        edit(ibmPowerVSMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.imageRef = {};
        }),
      ),
      allowed: false,
      rule: "powervs-unsupported-fields",
      message: /: spec\.imageRef: Forbidden/,
    },
    {
      name: "powervs-unsupported-fields: allows an update that leaves an existing imageRef alone",
      request: updateRequest(
        edit(ibmPowerVSMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.imageRef = { name: "rhcos-ci-abc12-image" };
        }),
        edit(ibmPowerVSMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.imageRef = { name: "rhcos-ci-abc12-image" };
          a.metadata.finalizers = [];
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "powervs-unsupported-fields: allows an IBMPowerVSMachine without them",
      request: createRequest(ibmPowerVSMachine({ name: "capi-only", owner: null, paused: "none" })),
      allowed: true,
      rule: "none",
    },
    {
      name: "powervs-unsupported-fields: allows an IBMPowerVSMachineTemplate without them",
      request: createRequest(ibmPowerVSMachineTemplate({ machineSet: null })),
      allowed: true,
      rule: "none",
    },
    {
      name: "powervs-unsupported-fields: judges PowerVS kinds only (a PowerVS field name on an AWSMachine is not its business)",
      request: createRequest(
        edit(awsMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.imageRef = { name: "rhcos-ci-abc12-image" };
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "openstack-unsupported-fields: judges OpenStack kinds only (an OpenStack field name on an IBMPowerVSMachine is not its business)",
      request: createRequest(
        edit(ibmPowerVSMachine({ name: "capi-only", owner: null, paused: "none" }), (a) => {
          a.spec.flavorID = "3a8e1f2c-7b6d-4e5f-9a0b-1c2d3e4f5a6b";
        }),
      ),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("<platform>-unsupported-fields: one rule per platform of the registry (SPEC §0, §5.5)", () => {
  it.each(PLATFORMS.map((p) => [p.platform, p] as const))(
    "%s has its rule on the validate webhook, and its converter names that rule's id in its refusals",
    (_name, platform) => {
      const unsupported = UNSUPPORTED_FIELDS_BY_PLATFORM.get(platform.platform);
      expect(unsupported, platform.platform).toBeDefined();
      const rule = RULES.find((r) => r.id === unsupported?.id);
      expect(rule?.webhook).toBe("validate");
      // A field no row of the platform's table knows: the converter refuses it, pointing at the rule.
      const issues = newIssues();
      platform.infraSpecToProviderSpec(
        { notAField: "x" },
        {
          path: "spec",
          infrastructure: { clusterName: "ci-abc12", platform: platform.platform, region: "", ipFamily: "" },
          owner: "Machine",
          controlPlane: false,
        },
        issues,
      );
      expect(issues.errors.find((e) => e.path === "spec.notAField")?.message).toContain(
        `(rule ${unsupported?.id})`,
      );
    },
  );
});

describe("authority-enum", () => {
  const cases: Case[] = [
    {
      name: "authority-enum: denies spec.authoritativeAPI=Migrating",
      request: updateRequest(
        mapiMachine(),
        edit(mapiMachine(), (m) => {
          m.spec.authoritativeAPI = "Migrating";
        }),
      ),
      allowed: false,
      rule: "authority-enum",
      message:
        'MAPI Machine openshift-machine-api/worker-a: spec.authoritativeAPI: Unsupported value: "Migrating": supported values: "MachineAPI", "ClusterAPI". Use MachineAPI or ClusterAPI; Migrating is a status value only the migration controller writes. (rule authority-enum)',
    },
    {
      name: "authority-enum: denies a bad spec.template.spec.authoritativeAPI on a new MachineSet",
      request: createRequest(
        edit(mapiMachineSet({ status: "absent" }), (m) => {
          m.spec.template.spec.authoritativeAPI = "clusterapi";
        }),
      ),
      allowed: false,
      rule: "authority-enum",
      message: /spec\.template\.spec\.authoritativeAPI: Unsupported value: "clusterapi"/,
    },
    {
      name: "authority-enum: allows ClusterAPI",
      request: createRequest(mapiMachine({ status: "absent", spec: "ClusterAPI" })),
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("status-owned-by-controllers", () => {
  const machine = mapiMachine();
  const cases: Case[] = [
    {
      name: "status-owned-by-controllers: denies a user writing status.authoritativeAPI",
      request: statusRequest(
        machine,
        edit(machine, (m) => {
          m.status.authoritativeAPI = "ClusterAPI";
        }),
      ),
      allowed: false,
      rule: "status-owned-by-controllers",
      message:
        "MAPI Machine openshift-machine-api/worker-a: status.authoritativeAPI changed: these status fields are written only by the migration and sync controllers. To change authority set spec.authoritativeAPI instead: oc edit machines.machine.openshift.io/worker-a -n openshift-machine-api (rule status-owned-by-controllers)",
    },
    {
      name: "status-owned-by-controllers: denies synchronizedGeneration and the Paused condition",
      request: statusRequest(
        mapiMachineSet(),
        edit(mapiMachineSet(), (m) => {
          m.status.synchronizedGeneration = 7;
          m.status.conditions[1].status = "True";
        }),
      ),
      allowed: false,
      rule: "status-owned-by-controllers",
      message: /: status\.synchronizedGeneration, status\.conditions\[type=Paused\] changed/,
    },
    {
      name: "status-owned-by-controllers: denies removing the Synchronized condition and synchronizedAPI",
      request: statusRequest(
        machine,
        edit(machine, (m) => {
          m.status.conditions = m.status.conditions.filter(
            (c: { type: string }) => c.type !== "Synchronized",
          );
          delete m.status.synchronizedAPI;
        }),
      ),
      allowed: false,
      rule: "status-owned-by-controllers",
      message: /status\.synchronizedAPI, status\.conditions\[type=Synchronized\] changed/,
    },
    {
      name: "status-owned-by-controllers: allows other status fields",
      request: statusRequest(
        machine,
        edit(machine, (m) => {
          m.status.phase = "Failed";
          m.status.errorMessage = "instance terminated out of band";
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "status-owned-by-controllers: the product's own identity is exempt",
      request: {
        ...statusRequest(
          machine,
          edit(machine, (m) => {
            m.status.authoritativeAPI = "Migrating";
          }),
        ),
        userInfo: { username: "system:serviceaccount:openshift-cluster-api:machine-api-migration" },
      },
      allowed: true,
      rule: "controller-user",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe("product-annotations", () => {
  const cases: Case[] = [
    {
      name: "product-annotations: denies a user removing needs-attention",
      request: updateRequest(
        edit(capiMachine({ name: "capi-only", paused: "none" }), (c) => {
          c.metadata.annotations[ANNOTATIONS.needsAttention] = "true";
        }),
        capiMachine({ name: "capi-only", paused: "none" }),
      ),
      allowed: false,
      rule: "product-annotations",
      message:
        'CAPI Machine openshift-cluster-api/capi-only: metadata.annotations["machine-api-migration.openshift.io/needs-attention"] removed: machine-api-migration.openshift.io/* annotations are written only by the machine-api-migration controllers. Leave them as they are; the only one users set is machine-api-migration.openshift.io/confirm-delete: "true". (rule product-annotations)',
    },
    {
      name: "product-annotations: denies adding paused-false-at to a MAPI Machine",
      request: updateRequest(
        mapiMachine(),
        edit(mapiMachine(), (m) => {
          m.metadata.annotations[ANNOTATIONS.pausedFalseAt] = "{}";
        }),
      ),
      allowed: false,
      rule: "product-annotations",
      message: /paused-false-at"\] added/,
    },
    {
      name: "product-annotations: denies a pause marker on a new MAPI Machine",
      request: createRequest(
        edit(mapiMachine({ status: "absent" }), (m) => {
          m.metadata.annotations[ANNOTATIONS.pausedBy] = PAUSED_BY_VALUE;
        }),
      ),
      allowed: false,
      rule: "product-annotations",
    },
    {
      name: "product-annotations: allows confirm-delete",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.metadata.annotations[ANNOTATIONS.confirmDelete] = "true";
        }),
      ),
      objects: [mapiMachine()],
      allowed: true,
      rule: "none",
    },
    {
      name: "product-annotations: allows the pause + marker pair on a new CAPI object (what §2.4 adds)",
      request: createRequest(capiMachine({ paused: "marked" })),
      objects: [mapiMachine()],
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});
