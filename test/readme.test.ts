import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { settingsReference } from "../src/config.js";

describe("README", () => {
  it("holds the configuration reference generated from the settings table (run `npm run cli -- config-reference`)", async () => {
    const readme = await readFile("README.md", "utf8");
    const block = /<!-- config-reference:start -->\n([\s\S]*)\n<!-- config-reference:end -->/.exec(readme);
    expect(block?.[1]).toBe(settingsReference());
  });

  it("names the two commands a newcomer needs", async () => {
    const readme = await readFile("README.md", "utf8");
    expect(readme).toContain("npm start");
    expect(readme).toContain("npm test");
  });
});
