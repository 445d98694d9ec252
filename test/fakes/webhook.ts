import { createHmac } from 'node:crypto';

/**
 * A push notification as a git host sends it: a JSON body signed with HMAC-SHA256 in the
 * `X-Hub-Signature-256` header. `tamper` flips the signature's last digit (a bad signature).
 */
export function pushHook(
  secret: string,
  opts: { tamper?: boolean } = {},
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  let signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  if (opts.tamper) signature = signature.replace(/.$/, (c) => (c === '0' ? '1' : '0'));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-hub-signature-256': signature,
    },
  };
}

/** POSTs a push notification to bpa serve's `/hooks/git`. */
export function sendPush(
  url: string,
  secret: string,
  opts: { tamper?: boolean } = {},
): Promise<Response> {
  return fetch(`${url}/hooks/git`, { method: 'POST', ...pushHook(secret, opts) });
}
