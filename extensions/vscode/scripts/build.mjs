// Bundles the extension host code (CommonJS, node) and the chat webview script (IIFE, browser).
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");

const shared = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  logLevel: "warning",
};

await Promise.all([
  esbuild.build({
    ...shared,
    entryPoints: ["src/extension.ts"],
    outfile: "out/extension.js",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
  }),
  esbuild.build({
    ...shared,
    entryPoints: ["src/webview/main.ts"],
    outfile: "out/webview.js",
    platform: "browser",
    format: "iife",
    target: "es2022",
  }),
]);
