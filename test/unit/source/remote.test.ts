import assert from 'node:assert/strict';
import { BpaError } from '../../../src/util/errors.js';
import { remoteFor, splitCredentials } from '../../../src/source/remote.js';
import { sourceCacheDir } from '../../../src/source/cache-dir.js';

function basic(user: string, pass: string): string {
  return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
}

describe('source: remotes and credentials', () => {
  it('moves URL credentials out of the URL, decoding them', () => {
    const { url, auth } = splitCredentials('https://bot:p%40ss%2Fw@git.example.org/site.git/');
    assert.equal(url, 'https://git.example.org/site.git');
    assert.deepEqual(auth, { username: 'bot', password: 'p@ss/w' });
    assert.deepEqual(splitCredentials('http://127.0.0.1:8080/a/b.git'), {
      url: 'http://127.0.0.1:8080/a/b.git',
    });
  });

  it('refuses what isomorphic-git cannot fetch, without echoing the URL', () => {
    for (const bad of ['git@host:site.git', 'ssh://git@host/site.git', 'file:///srv/site.git']) {
      assert.throws(
        () => splitCredentials(bad),
        (err: unknown) =>
          err instanceof BpaError &&
          /GIT_URL_(INVALID|UNSUPPORTED)/.test(err.code) &&
          err.retry === 'stalled',
      );
    }
  });

  it('a token goes in a basic-auth header as x-access-token unless a username is given', () => {
    assert.deepEqual(remoteFor('https://h/r.git', { token: 'T0K' }).headers(), {
      authorization: basic('x-access-token', 'T0K'),
    });
    assert.deepEqual(remoteFor('https://h/r.git', { token: 'T0K', username: 'oauth2' }).headers(), {
      authorization: basic('oauth2', 'T0K'),
    });
    assert.deepEqual(remoteFor('https://h/r.git', { username: 'u', password: 'p' }).headers(), {
      authorization: basic('u', 'p'),
    });
    assert.deepEqual(remoteFor('https://h/r.git').headers(), {});
  });

  it('explicit auth wins over URL credentials; the URL never keeps them', () => {
    const r = remoteFor('https://old:OLD@h/r.git', { token: 'NEW' });
    assert.equal(r.url, 'https://h/r.git');
    assert.deepEqual(r.headers(), { authorization: basic('x-access-token', 'NEW') });
    assert.ok(r.secrets.includes('NEW'));
    const fromUrl = remoteFor('https://old:OLD@h/r.git');
    assert.deepEqual(fromUrl.headers(), { authorization: basic('old', 'OLD') });
    assert.ok(fromUrl.secrets.includes('OLD') && fromUrl.secrets.includes(basic('old', 'OLD')));
  });

  it('hands out a fresh headers object each time (isomorphic-git mutates them)', () => {
    const r = remoteFor('https://h/r.git', { token: 't' });
    const h = r.headers();
    h['git-protocol'] = 'version=2';
    assert.deepEqual(Object.keys(r.headers()), ['authorization']);
  });

  it('one cache directory per URL, whatever the credentials', () => {
    const a = sourceCacheDir('/var/lib/bpa', 'https://u:one@h/r.git');
    assert.equal(a, sourceCacheDir('/var/lib/bpa', 'https://h/r.git'));
    assert.match(a, /^\/var\/lib\/bpa\/source\/[0-9a-f]{16}$/);
    assert.notEqual(a, sourceCacheDir('/var/lib/bpa', 'https://h/other.git'));
  });
});
