// The console: signed out, the sign-in form; signed in, the view the page's hash names (route.ts).
import './styles.css';
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useRoute } from './route.js';
import { adminClient, forgetToken, savedToken } from './session.js';
import { SignedIn } from './ui.js';
import { AuditView } from './views/audit.js';
import { CreateKey } from './views/create-key.js';
import { KeyList } from './views/key-list.js';
import { KeyPage } from './views/key-page.js';
import { SignIn } from './views/sign-in.js';

/** Puts the focus on the view's heading (focusable by script only). */
function toHeading() {
  const heading = document.querySelector<HTMLElement>('main h1');
  if (!heading) return;
  heading.tabIndex = -1;
  heading.focus();
}

function Console() {
  const [token, setToken] = useState(savedToken);
  const [farewell, setFarewell] = useState<string | undefined>();
  const route = useRoute();
  const signed = useMemo(
    () =>
      token && {
        admin: adminClient(token),
        signOut: (reason?: string) => {
          forgetToken();
          setFarewell(reason);
          setToken(null);
        },
      },
    [token],
  );
  const view =
    route.view === 'key'
      ? `key ${route.keyId}`
      : route.view === 'keys' || route.view === 'audit'
        ? `${route.view} ${route.query}`
        : route.view;
  // A new view (or a form made again) takes the focus from where a person left it: the view's heading gets
  // it, not the top of the page, so the next Tab goes on in the view. Focus still on the page stays, and a
  // page just loaded starts at its top (the skip button first).
  const loaded = useRef(false);
  useEffect(() => {
    const lost = !document.activeElement || document.activeElement === document.body;
    if (signed && lost && loaded.current) toHeading();
    loaded.current = true;
  }, [view, signed]);
  if (!signed) return <SignIn reason={farewell} onSignedIn={setToken} />;
  return (
    <SignedIn.Provider value={signed}>
      <button type="button" class="skip" onClick={toHeading}>
        Skip to content
      </button>
      <header>
        <a href="#/keys" class="brand">
          Animal Store console
        </a>
        <nav aria-label="Console">
          <a href="#/keys">Keys</a>
          <a href="#/new">New key</a>
          <a href="#/audit">Audit</a>
          <a href="../docs">Admin API reference</a>
        </nav>
        <button type="button" onClick={() => signed.signOut('Signed out.')}>
          Sign out
        </button>
      </header>
      <main>
        {route.view === 'keys' && <KeyList query={route.query} />}
        {/* One page per key: another key's page starts empty, never showing the last one's facts. */}
        {route.view === 'key' && <KeyPage key={route.keyId} keyId={route.keyId} />}
        {route.view === 'new' && <CreateKey />}
        {route.view === 'audit' && <AuditView query={route.query} />}
      </main>
    </SignedIn.Provider>
  );
}

const root = document.getElementById('app');
if (root) render(<Console />, root);
