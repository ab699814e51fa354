// Bundles tests/mock-backend.ts into one classic script for injection into the built UI.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  build: {
    outDir: fileURLToPath(new URL("../../target/ui-test/mock", import.meta.url)),
    emptyOutDir: true,
    lib: {
      entry: fileURLToPath(new URL("./mock-backend.ts", import.meta.url)),
      formats: ["iife"],
      name: "tooltrailMock",
      fileName: () => "mock-backend.js",
    },
    minify: false,
  },
});
