/** The chat webview's HTML shell: strict content-security policy, one nonce'd script. */

export interface ChatHtmlInput {
  nonce: string;
  cspSource: string;
  scriptUri: string;
  styleUri: string;
}

export function chatHtml(input: ChatHtmlInput): string {
  const csp = [
    "default-src 'none'",
    `style-src ${input.cspSource}`,
    `img-src ${input.cspSource} data:`, // no remote image: a drawn reply sends no request
    `font-src ${input.cspSource}`,
    `script-src 'nonce-${input.nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${input.styleUri}" rel="stylesheet">
<title>bonsai</title>
</head>
<body>
<header class="bar">
  <select id="session" aria-label="Session"></select>
  <button id="new-session" class="secondary" title="Start a new session">New</button>
</header>
<div id="status" class="status" hidden></div>
<main id="log" aria-live="polite"></main>
<form id="composer">
  <textarea id="input" rows="3" placeholder="Ask bonsai… (/help for commands, Enter to send)"></textarea>
  <div class="buttons">
    <button id="send" type="submit">Send</button>
    <button id="cancel" type="button" class="secondary" hidden>Cancel</button>
  </div>
</form>
<script nonce="${input.nonce}" src="${input.scriptUri}"></script>
</body>
</html>`;
}

/** 32 random alphanumerics for the script nonce. */
export function makeNonce(random: () => number = Math.random): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let nonce = "";
  for (let index = 0; index < 32; index++) {
    nonce += chars.charAt(Math.floor(random() * chars.length));
  }
  return nonce;
}
