/**
 * The shape of the AWS field table (SPEC §5.3) and its agreement with the unsupported-field list (SPEC §2.3).
 * What each row converts, both ways, is tested row by row in test/sync/conversion/aws.test.ts.
 */
import { describe, expect, it } from "vitest";
import { AWS_FIELD_TABLE, AWS_UNSUPPORTED_FIELDS } from "../../../src/platforms/aws/index.js";

const duplicates = (fields: readonly string[]) => fields.filter((f, i) => fields.indexOf(f) !== i);

describe("SPEC §5.3 AWS field table", () => {
  it("each providerSpec field is converted by one row only", () => {
    expect(duplicates(AWS_FIELD_TABLE.flatMap((row) => row.mapi))).toEqual([]);
  });
  it("each AWSMachine spec field is converted by one row only", () => {
    expect(duplicates(AWS_FIELD_TABLE.flatMap((row) => row.capi))).toEqual([]);
  });
  it("a row that reads only some keys of an AWSMachine object names that object as its own field", () => {
    for (const row of AWS_FIELD_TABLE)
      for (const field of Object.keys(row.capiKnownKeys ?? {})) expect(row.capi).toContain(field);
  });
  it("every row names the field it converts on at least one side", () => {
    for (const row of AWS_FIELD_TABLE) expect(row.mapi.length + row.capi.length).toBeGreaterThan(0);
  });
});

describe("SPEC §2.3 aws-unsupported-fields and the table", () => {
  const capiFields = new Set(AWS_FIELD_TABLE.flatMap((row) => row.capi));
  const knownKeys = new Map(AWS_FIELD_TABLE.flatMap((row) => Object.entries(row.capiKnownKeys ?? {})));
  it.each([...AWS_UNSUPPORTED_FIELDS])("%s is a field no row converts", (field) => {
    const [parent = "", key] = field.split(".");
    if (key === undefined) expect(capiFields.has(parent)).toBe(false);
    else {
      // A nested unsupported field sits under an object some row converts only part of.
      expect(knownKeys.get(parent)).toBeDefined();
      expect(knownKeys.get(parent)).not.toContain(key);
    }
  });
});
