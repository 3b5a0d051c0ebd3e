import { describe, expect, it } from "vitest";
import { chatHtml, makeNonce } from "../../src/chat/chatHtml";
import { parseFromWebview } from "../../src/chat/messages";

describe("parseFromWebview", () => {
  it.each([
    [{ type: "ready" }, { type: "ready" }],
    [
      { type: "send", text: "hi" },
      { type: "send", text: "hi" },
    ],
    [
      { type: "switchSession", sessionId: "abc" },
      { type: "switchSession", sessionId: "abc" },
    ],
    [
      { type: "approval", id: "t:1", approved: false },
      { type: "approval", id: "t:1", approved: false },
    ],
    [{ type: "cancel", extra: 1 }, { type: "cancel" }],
  ])("accepts %j", (raw, expected) => {
    expect(parseFromWebview(raw)).toEqual(expected);
  });

  it.each([
    null,
    "send",
    { type: "send" },
    { type: "send", text: 42 },
    { type: "send", text: "x".repeat(200_001) },
    { type: "switchSession", sessionId: "" },
    { type: "approval", id: "t:1", approved: "yes" },
    { type: "eval", code: "1" },
  ])("rejects %j", (raw) => {
    expect(parseFromWebview(raw)).toBeUndefined();
  });
});

describe("chatHtml", () => {
  it("allows only the nonce'd script and no inline script", () => {
    const html = chatHtml({ nonce: "N0NCE", cspSource: "vscode-resource:", scriptUri: "s.js", styleUri: "s.css" });
    expect(html).toContain("default-src 'none'");
    expect(html).toContain("script-src 'nonce-N0NCE'");
    expect(html).not.toContain("unsafe-inline");
    expect(html).toContain('<script nonce="N0NCE" src="s.js"></script>');
    expect(html.match(/<script/g)).toHaveLength(1);
  });

  it("loads no remote image (a drawn reply makes no request)", () => {
    const html = chatHtml({ nonce: "N", cspSource: "vscode-resource:", scriptUri: "s.js", styleUri: "s.css" });
    const images = /img-src ([^;"]*)/.exec(html)?.[1] ?? "";
    expect(images.split(" ")).toEqual(["vscode-resource:", "data:"]);
  });

  it("makes 32-character alphanumeric nonces", () => {
    expect(makeNonce()).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(makeNonce(() => 0)).toBe("A".repeat(32));
  });
});
