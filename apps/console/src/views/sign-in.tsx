// Sign-in: an admin token (one of the service's ADMIN_TOKENS), checked by asking for one key before it is
// kept (for this tab only, session.ts).
import { useState } from 'preact/hooks';
import { adminClient, isRefusedToken, problem, saveToken } from '../session.js';

export function SignIn(props: { reason?: string | undefined; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setFailure(null);
    try {
      await adminClient(token).listKeys({ limit: 1 });
      saveToken(token);
      props.onSignedIn(token);
    } catch (error) {
      setFailure(
        isRefusedToken(error) ? `The service refused this token: ${problem(error)}` : problem(error),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Animal Store console</h1>
      <p>Keys, plans and usage of this service, through its admin API.</p>
      {props.reason && <p role="status">{props.reason}</p>}
      <form onSubmit={submit}>
        <label>
          Admin token
          <input
            type="password"
            name="token"
            autocomplete="off"
            required
            minLength={32}
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      {failure && (
        <p role="alert" class="notice failed">
          {failure}
        </p>
      )}
      <p class="hint">The token is kept for this tab only, and sent only to this service's admin API.</p>
    </main>
  );
}
