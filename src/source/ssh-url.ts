/** A repository reached over SSH: `ssh://[user@]host[:port]/path` or scp-like `[user@]host:path`. */
export interface SshRepo {
  user?: string;
  host: string;
  port?: number;
  path: string;
  /** How known_hosts names the server: `host`, or `[host]:port` for another port. */
  knownHostsName: string;
}

/**
 * The SSH form of a repository URL, or undefined when it is not one (http(s), a path). Git's
 * own rules: a URL with `ssh://` (or `git+ssh://`), or, without a scheme, `host:path` where no
 * slash comes before the first colon (`./a:b` is a local path).
 */
export function parseSshUrl(url: string): SshRepo | undefined {
  const full = /^(?:git\+)?ssh:\/\/(?:([^@/]+)@)?(\[[^\]]+\]|[^:/]+)(?::(\d{1,5}))?(\/.*)$/.exec(
    url,
  );
  if (full) {
    const port = full[3] ? Number(full[3]) : undefined;
    if (port !== undefined && (port < 1 || port > 65535)) return undefined;
    const host = (full[2] ?? '').replace(/^\[|\]$/g, '');
    return repo(full[1], host, port, full[4] ?? '');
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return undefined;
  const scp = /^(?:([^@/:]+)@)?(\[[^\]]+\]|[^:/\s]+):(.+)$/.exec(url);
  if (!scp) return undefined;
  const host = (scp[2] ?? '').replace(/^\[|\]$/g, '');
  return repo(scp[1], host, undefined, scp[3] ?? '');
}

function repo(
  user: string | undefined,
  host: string,
  port: number | undefined,
  path: string,
): SshRepo {
  return {
    ...(user ? { user } : {}),
    host,
    ...(port !== undefined ? { port } : {}),
    path,
    knownHostsName: port !== undefined && port !== 22 ? `[${host}]:${port}` : host,
  };
}

export function isSshUrl(url: string): boolean {
  return parseSshUrl(url) !== undefined;
}
