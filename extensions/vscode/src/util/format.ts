/** Small pure formatters shared by the views. */

/** 1234 → "1.2k", 999 → "999", 1_500_000 → "1.5M". */
export function formatTokens(tokens: number): string {
  const abs = Math.abs(tokens);
  if (abs >= 1_000_000) {
    return `${trimZero((tokens / 1_000_000).toFixed(1))}M`;
  }
  if (abs >= 1_000) {
    return `${trimZero((tokens / 1_000).toFixed(1))}k`;
  }
  return String(Math.round(tokens));
}

function trimZero(text: string): string {
  return text.endsWith(".0") ? text.slice(0, -2) : text;
}

/** Collapse whitespace and cut a one-line preview of at most `max` characters. */
export function preview(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** The error message of anything thrown, for a short user-facing notice. */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return String(error);
}

const NODE_ID = String.raw`'?\b[a-z]{1,3}_[0-9a-f]{8,}\b'?`;

/** Node ids (`m_3f9c…`) mean nothing to a user: a daemon message without them. */
export function withoutIds(text: string): string {
  return text
    .replace(new RegExp(String.raw`\b(ledger node) ${NODE_ID}`, "g"), "$1")
    .replace(new RegExp(String.raw`\bnode ${NODE_ID}`, "g"), "this node")
    .replace(new RegExp(NODE_ID, "g"), "this node");
}
