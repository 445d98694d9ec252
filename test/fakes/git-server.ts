// A git server for tests: a small Node HTTP server that runs the real `git http-backend` CGI over
// bare repositories in a temp dir, so bpa's git client is exercised against the real smart-HTTP
// protocol (ref advertisement, upload-pack, receive-pack). "People" commit with the system git
// straight into the bare repositories, bypassing HTTP, so their commits never show up in the
// request log and never pass through an intercept hook.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface GitServerOptions {
  /** Require HTTP basic auth with exactly these credentials (401 + WWW-Authenticate otherwise). */
  auth?: { username: string; password: string };
  /** Pass the client's `Git-Protocol` header to http-backend, allowing protocol v2 (default true). */
  protocolV2?: boolean;
}

export interface RecordedGitRequest {
  method: string;
  /** URL path as sent, e.g. /site.git/info/refs */
  path: string;
  /** Raw query string without '?', e.g. service=git-upload-pack ('' when none). */
  query: string;
  /** Content-Encoding of the request body, when the client compressed it. */
  encoding?: string;
  /** Response status, filled in once it is known. */
  status?: number;
}

/** Returned by an intercept hook to answer the request itself instead of http-backend. */
export interface InterceptReply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface InterceptMatch {
  method?: string;
  /** Substring of, or pattern for, the request path. */
  path?: string | RegExp;
  /** Substring of the query string. */
  query?: string;
  /** How many matching requests the hook sees before it is removed (default 1). */
  times?: number;
}

export type InterceptHook = (
  req: RecordedGitRequest,
) => Promise<InterceptReply | void> | InterceptReply | void;

export interface CommitAuthor {
  name: string;
  email: string;
}

export interface LogEntry {
  sha: string;
  parents: string[];
  author: CommitAuthor;
  subject: string;
  /** Full message (subject, body, trailers), trailing newline trimmed. */
  message: string;
}

export interface GitServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** Directory holding the bare repositories. */
  readonly root: string;
  /** Every HTTP request received, in arrival order (including refused and intercepted ones). */
  readonly requests: RecordedGitRequest[];
  /** Creates a bare repository with one commit holding `files`; returns its clone URL. */
  createRepo(
    name: string,
    opts?: { files?: Record<string, string>; branch?: string },
  ): Promise<string>;
  repoUrl(name: string): string;
  /** A person's commit pushed straight into the bare repository (text or bytes); null deletes a file. */
  commitAs(
    repo: string,
    files: Record<string, string | Buffer | null>,
    message: string,
    opts?: { branch?: string; author?: CommitAuthor },
  ): Promise<string>;
  log(repo: string, ref: string): Promise<LogEntry[]>;
  /** A file's content at `ref`, or undefined when the path does not exist there. */
  readFile(repo: string, ref: string, filePath: string): Promise<string | undefined>;
  /** Runs the system git inside the bare repository (tags, config, rev-parse…); returns stdout. */
  git(
    repo: string,
    args: string[],
    opts?: { input?: string | Buffer; env?: Record<string, string> },
  ): Promise<string>;
  /** Runs `hook` before the matching request reaches http-backend; it may delay or answer it. */
  intercept(match: InterceptMatch, hook: InterceptHook): void;
  clearIntercepts(): void;
  /** Stops accepting connections and drops open ones: clients see connection refused. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** PIDs of the git and http-backend processes running right now. */
  pids(): number[];
  /** Kills every child still running, closes the server and removes the repositories. */
  stop(): Promise<void>;
}

export const PERSON: CommitAuthor = { name: 'A Person', email: 'person@example.org' };

export async function startGitServer(opts: GitServerOptions = {}): Promise<GitServer> {
  const root = await mkdtemp(path.join(tmpdir(), 'bpa-git-server-'));
  const server = new FakeGitServer(root, opts);
  try {
    await mkdir(server.home);
    await server.listen(0);
  } catch (err: unknown) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
  return server;
}

// ---------------------------------------------------------------------------------------------

interface Hook {
  match: InterceptMatch;
  hook: InterceptHook;
  left: number;
}

class FakeGitServer implements GitServer {
  readonly requests: RecordedGitRequest[] = [];
  readonly home: string;
  readonly repos: string;
  private readonly server: http.Server;
  private readonly children = new Set<ChildProcess>();
  private readonly sockets = new Set<Socket>();
  private hooks: Hook[] = [];
  private port = 0;
  private listening = false;
  private stopped = false;

  constructor(
    readonly root: string,
    private readonly opts: GitServerOptions,
  ) {
    this.home = path.join(root, 'home');
    this.repos = root;
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake git server: ${String(err)}\n`);
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once('error', onError);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', onError);
        this.port = (this.server.address() as AddressInfo).port;
        this.listening = true;
        resolve();
      });
    });
  }

  repoUrl(name: string): string {
    return `${this.url}/${repoDirName(name)}`;
  }

  private repoDir(name: string): string {
    return path.join(this.repos, repoDirName(name));
  }

  async createRepo(
    name: string,
    opts: { files?: Record<string, string>; branch?: string } = {},
  ): Promise<string> {
    const branch = opts.branch ?? 'main';
    const dir = this.repoDir(name);
    await this.run(['init', '--quiet', '--bare', `--initial-branch=${branch}`, dir], this.root);
    await this.git(name, ['config', 'http.receivepack', 'true']);
    await this.writeCommit(
      name,
      branch,
      opts.files ?? { 'README.md': `# ${name}\n` },
      'initial commit',
      PERSON,
      true,
    );
    return this.repoUrl(name);
  }

  async commitAs(
    repo: string,
    files: Record<string, string | Buffer | null>,
    message: string,
    opts: { branch?: string; author?: CommitAuthor } = {},
  ): Promise<string> {
    const branch =
      opts.branch ?? (await this.git(repo, ['symbolic-ref', '--short', 'HEAD'])).trim();
    return this.writeCommit(repo, branch, files, message, opts.author ?? PERSON, false);
  }

  /**
   * Builds a commit with plumbing in a throwaway index, on top of the branch head (or as a root
   * commit when the branch does not exist), and moves the branch with a compare-and-swap so a
   * concurrent push is never silently overwritten.
   */
  private async writeCommit(
    repo: string,
    branch: string,
    files: Record<string, string | Buffer | null>,
    message: string,
    author: CommitAuthor,
    root: boolean,
  ): Promise<string> {
    const ref = `refs/heads/${branch}`;
    const parent = root
      ? ''
      : (await this.git(repo, ['rev-parse', '--verify', '--quiet', ref]).catch(() => '')).trim();
    const index = path.join(
      this.root,
      `index-${process.pid}-${Math.random().toString(16).slice(2)}`,
    );
    const env = { GIT_INDEX_FILE: index };
    try {
      if (parent) await this.git(repo, ['read-tree', parent], { env });
      else await this.git(repo, ['read-tree', '--empty'], { env });
      for (const [file, content] of Object.entries(files)) {
        if (content === null) {
          // Mode 0 removes the entry; unlike --force-remove it needs no work tree.
          await this.git(repo, ['update-index', '--index-info'], {
            env,
            input: `0 ${'0'.repeat(40)}\t${file}\n`,
          });
        } else {
          const blob = (
            await this.git(repo, ['hash-object', '-w', '--stdin'], { input: content })
          ).trim();
          await this.git(repo, ['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], {
            env,
          });
        }
      }
      const tree = (await this.git(repo, ['write-tree'], { env })).trim();
      const who = {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_COMMITTER_NAME: author.name,
        GIT_COMMITTER_EMAIL: author.email,
      };
      const args = ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-F', '-'];
      const sha = (await this.git(repo, args, { input: message, env: who })).trim();
      await this.git(repo, ['update-ref', ref, sha, parent || '0'.repeat(40)]);
      return sha;
    } finally {
      await rm(index, { force: true });
    }
  }

  async log(repo: string, ref: string): Promise<LogEntry[]> {
    const out = await this.git(repo, [
      'log',
      '--format=%H%x1f%P%x1f%an%x1f%ae%x1f%s%x1f%B%x1e',
      ref,
    ]);
    return out
      .split('\x1e')
      .map((rec) => rec.replace(/^\n/, ''))
      .filter((rec) => rec.length > 0)
      .map((rec) => {
        const [sha = '', parents = '', name = '', email = '', subject = '', body = ''] =
          rec.split('\x1f');
        return {
          sha,
          parents: parents ? parents.split(' ') : [],
          author: { name, email },
          subject,
          message: body.replace(/\n+$/, ''),
        };
      });
  }

  async readFile(repo: string, ref: string, filePath: string): Promise<string | undefined> {
    try {
      return await this.git(repo, ['show', `${ref}:${filePath}`]);
    } catch {
      return undefined;
    }
  }

  git(
    repo: string,
    args: string[],
    opts: { input?: string | Buffer; env?: Record<string, string> } = {},
  ): Promise<string> {
    return this.run(['--git-dir', this.repoDir(repo), ...args], this.root, opts);
  }

  private run(
    args: string[],
    cwd: string,
    opts: { input?: string | Buffer; env?: Record<string, string> } = {},
  ): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn('git', args, { cwd, env: { ...this.gitEnv(), ...opts.env } });
      this.children.add(child);
      let out = '';
      let errText = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (errText += d));
      child.on('error', reject);
      child.on('close', (code) => {
        this.children.delete(child);
        if (code === 0) resolve(out);
        else reject(new Error(`git ${args.join(' ')} exited ${code}: ${errText.trim()}`));
      });
      // A command that never reads its input may exit before the write lands.
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.input ?? '');
    });
  }

  /** Isolated from the machine's and the user's git configuration. */
  private gitEnv(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LANG: 'C',
    };
  }

  intercept(match: InterceptMatch, hook: InterceptHook): void {
    this.hooks.push({ match, hook, left: match.times ?? 1 });
  }

  clearIntercepts(): void {
    this.hooks = [];
  }

  private takeHook(rec: RecordedGitRequest): Hook | undefined {
    const found = this.hooks.find(({ match: m }) => {
      if (m.method && m.method !== rec.method) return false;
      if (m.query !== undefined && !rec.query.includes(m.query)) return false;
      if (typeof m.path === 'string' && !rec.path.includes(m.path)) return false;
      if (m.path instanceof RegExp && !m.path.test(rec.path)) return false;
      return true;
    });
    if (found && --found.left <= 0) this.hooks = this.hooks.filter((h) => h !== found);
    return found;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const rec: RecordedGitRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
    };
    const encoding = req.headers['content-encoding'];
    if (encoding) rec.encoding = encoding;
    this.requests.push(rec);
    res.on('finish', () => (rec.status = res.statusCode));

    const user = this.authenticate(req);
    if (user === false) {
      req.resume();
      res.writeHead(401, {
        'www-authenticate': 'Basic realm="bpa test git"',
        'content-type': 'text/plain',
      });
      res.end('authentication required\n');
      return;
    }

    const hook = this.takeHook(rec);
    if (hook) {
      const reply = await hook.hook({ ...rec });
      if (reply) {
        req.resume();
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
        return;
      }
      // The client may have given up, or the server stopped, while the hook held the request.
      if (this.stopped || req.socket.destroyed) return;
    }
    await this.cgi(req, res, url, user);
  }

  /** undefined: no auth configured; false: refused; a string: the authenticated user. */
  private authenticate(req: http.IncomingMessage): string | undefined | false {
    const want = this.opts.auth;
    if (!want) return undefined;
    const m = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m?.[1]) return false;
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const user = decoded.slice(0, colon);
    const pass = decoded.slice(colon + 1);
    return user === want.username && pass === want.password ? user : false;
  }

  private cgi(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    url: URL,
    user: string | undefined,
  ): Promise<void> {
    const env: NodeJS.ProcessEnv = {
      ...this.gitEnv(),
      GIT_PROJECT_ROOT: this.repos,
      GIT_HTTP_EXPORT_ALL: '1',
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
      SERVER_NAME: '127.0.0.1',
      SERVER_PORT: String(this.port),
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    };
    if (user !== undefined) env.REMOTE_USER = user;
    if (req.headers['content-type']) env.CONTENT_TYPE = req.headers['content-type'];
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
    // CGI passes request headers as HTTP_*; http-backend reads HTTP_CONTENT_ENCODING (to inflate
    // gzip bodies itself) and HTTP_GIT_PROTOCOL (to speak protocol v2).
    for (const [name, value] of Object.entries(req.headers)) {
      const key = name.toLowerCase();
      if (key === 'authorization' || key === 'content-type' || key === 'content-length') continue;
      if (key === 'git-protocol' && this.opts.protocolV2 === false) continue;
      if (typeof value !== 'string') continue;
      env[`HTTP_${key.toUpperCase().replace(/-/g, '_')}`] = value;
    }

    return new Promise((resolve) => {
      const child = spawn(HTTP_BACKEND, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      this.children.add(child);
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const finish = (): void => {
        this.children.delete(child);
        resolve();
      };
      child.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`http-backend: ${err.message}\n`);
        finish();
      });
      // A client that goes away mid-request must not leave the CGI running.
      res.on('close', () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      req.pipe(child.stdin);
      child.stdin.on('error', () => undefined);

      let head = Buffer.alloc(0);
      let headersDone = false;
      child.stdout.on('data', (chunk: Buffer) => {
        if (headersDone) {
          res.write(chunk);
          return;
        }
        head = Buffer.concat([head, chunk]);
        const split = findHeaderEnd(head);
        if (!split) return;
        headersDone = true;
        const { status, headers } = parseCgiHeaders(head.subarray(0, split.at).toString('latin1'));
        res.writeHead(status, headers);
        const rest = head.subarray(split.at + split.len);
        if (rest.length > 0) res.write(rest);
      });
      child.on('close', (code) => {
        if (!headersDone) {
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`http-backend exited ${code}: ${stderr}\n`);
        } else {
          res.end();
        }
        finish();
      });
    });
  }

  async down(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.server.closeAllConnections();
    await closed;
  }

  async up(): Promise<void> {
    if (this.listening) return;
    await this.listen(this.port);
  }

  pids(): number[] {
    return [...this.children].flatMap((c) =>
      c.pid !== undefined && c.exitCode === null ? [c.pid] : [],
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.hooks = [];
    for (const child of this.children) {
      if (child.pid === undefined || child.exitCode !== null) continue;
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // Already gone between the check and the kill.
      }
    }
    this.children.clear();
    await this.down();
    await rm(this.root, { recursive: true, force: true });
  }
}

function repoDirName(name: string): string {
  return name.endsWith('.git') ? name : `${name}.git`;
}

function findHeaderEnd(buf: Buffer): { at: number; len: number } | undefined {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return { at: crlf, len: 4 };
  if (lf >= 0) return { at: lf, len: 2 };
  return undefined;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers };
}
