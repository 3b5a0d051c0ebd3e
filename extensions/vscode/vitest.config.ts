import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts", "test/daemon/**/*.test.ts"],
    environment: "node",
  },
});
