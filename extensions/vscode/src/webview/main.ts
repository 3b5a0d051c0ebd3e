/** The chat webview: renders entries posted by the extension and posts user actions back. */
import type { Entry } from "../chat/entries";
import type { FromWebview, SessionOption, ToWebview } from "../chat/messages";
import { entryClasses, renderEntry } from "./render";

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const log = byId<HTMLElement>("log");
const input = byId<HTMLTextAreaElement>("input");
const sessionSelect = byId<HTMLSelectElement>("session");
const cancelButton = byId<HTMLButtonElement>("cancel");
const status = byId<HTMLElement>("status");
const nodes = new Map<string, HTMLElement>();

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) {
    throw new Error(`bonsai webview: missing #${id}`);
  }
  return element as T;
}

function post(message: FromWebview): void {
  vscode.postMessage(message);
}

function upsert(entry: Entry): void {
  const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  let node = nodes.get(entry.key);
  const wasOpen = node?.querySelector("details")?.open ?? false;
  if (node === undefined) {
    node = document.createElement("div");
    node.dataset.key = entry.key;
    nodes.set(entry.key, node);
    log.appendChild(node);
  }
  node.className = entryClasses(entry);
  node.innerHTML = renderEntry(entry);
  // How many times the entry was redrawn: more than one for a streamed reply.
  node.dataset.updates = String(Number(node.dataset.updates ?? "0") + 1);
  const details = node.querySelector("details");
  if (details !== null && wasOpen) {
    details.open = true;
  }
  if (nearBottom) {
    log.scrollTop = log.scrollHeight;
  }
}

function reset(entries: Entry[]): void {
  nodes.clear();
  log.replaceChildren();
  entries.forEach(upsert);
  log.scrollTop = log.scrollHeight;
}

function showSessions(sessions: SessionOption[], currentId: string | null): void {
  sessionSelect.replaceChildren();
  if (currentId === null) {
    sessionSelect.appendChild(new Option("(no session yet: send a message)", "", true, true));
  }
  for (const session of sessions) {
    const label = `${session.title || "untitled"} (${session.messageCount})${session.foreign ? " · other workspace" : ""}`;
    const option = new Option(label, session.sessionId, false, session.sessionId === currentId);
    option.title = session.workspace;
    sessionSelect.appendChild(option);
  }
}

function setBusy(busy: boolean): void {
  cancelButton.hidden = !busy;
  document.body.classList.toggle("busy", busy);
}

function onMessage(message: ToWebview): void {
  switch (message.type) {
    case "reset":
      reset(message.entries);
      setBusy(message.busy);
      break;
    case "upsert":
      message.entries.forEach(upsert);
      break;
    case "busy":
      setBusy(message.busy);
      break;
    case "sessions":
      showSessions(message.sessions, message.currentId);
      break;
    case "restoreInput":
      if (input.value.trim() === "") {
        input.value = message.text;
      }
      break;
    case "connection":
      status.hidden = message.connected;
      status.textContent = message.detail;
      break;
    case "reveal":
      nodes.get(message.key)?.scrollIntoView({ block: "nearest" });
      break;
  }
}

function send(): void {
  const text = input.value.trim();
  if (text === "") {
    return;
  }
  post({ type: "send", text });
  input.value = "";
}

window.addEventListener("message", (event: MessageEvent<ToWebview>) => onMessage(event.data));
byId<HTMLFormElement>("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  send();
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
cancelButton.addEventListener("click", () => post({ type: "cancel" }));
byId<HTMLButtonElement>("new-session").addEventListener("click", () => post({ type: "newSession" }));
sessionSelect.addEventListener("change", () => {
  if (sessionSelect.value !== "") {
    post({ type: "switchSession", sessionId: sessionSelect.value });
  }
});
log.addEventListener("click", (event) => {
  const target = event.target as HTMLElement;
  const button = target.closest<HTMLButtonElement>("button[data-approval]");
  if (button?.dataset.approval !== undefined) {
    post({ type: "approval", id: button.dataset.approval, approved: button.dataset.approved === "true" });
  }
});
post({ type: "ready" });
