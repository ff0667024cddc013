// Where the console is: the page's hash (`#/keys?plan=pro`, `#/keys/3f2a9c0b1d4e`, `#/new`, `#/audit`), so that every
// view has an address to share and the browser's back button works, while the server serves one page.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'keys'; query: URLSearchParams }
  | { view: 'key'; keyId: string }
  | { view: 'new' }
  | { view: 'audit'; query: URLSearchParams };

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const key = /^\/keys\/([^/]+)$/.exec(path);
  if (key?.[1]) return { view: 'key', keyId: decodeURIComponent(key[1]) };
  if (path === '/new') return { view: 'new' };
  if (path === '/audit') return { view: 'audit', query: new URLSearchParams(search) };
  return { view: 'keys', query: new URLSearchParams(search) };
}

/** The address of a view that takes a query (`#/keys`, `#/audit`), with `query` when it has any. */
const withQuery = (path: string, query?: URLSearchParams) => {
  const search = query?.toString();
  return search ? `${path}?${search}` : path;
};
export const keysHref = (query?: URLSearchParams) => withQuery('#/keys', query);
export const auditHref = (query?: URLSearchParams) => withQuery('#/audit', query);
export const keyHref = (keyId: string) => `#/keys/${encodeURIComponent(keyId)}`;
export const go = (href: string) => {
  window.location.hash = href;
};

export function useRoute(): Route {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const changed = () => setHash(window.location.hash);
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return parseRoute(hash);
}
