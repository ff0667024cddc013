// The pieces every view uses: the signed-in context, a confirmation dialog, the answer of an action, and
// the hook that runs a call of the admin client and turns its failure into words.
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { type Admin, isOutage, isRefusedToken, problem } from './session.js';

export type Signed = { admin: Admin; signOut: (reason?: string) => void };
export const SignedIn = createContext<Signed | null>(null);

export function useSigned(): Signed {
  const signed = useContext(SignedIn);
  if (!signed) throw new Error('useSigned outside a signed-in console');
  return signed;
}

export type Notice = { kind: 'done' | 'failed'; text: string };

/**
 * An action's answer: a status for what was done, an alert for what failed (read out by screen readers).
 * `takesFocus`: it takes the focus when it appears, for the answer of an action a person asked for in a
 * dialog: the control that opened it may be gone with what it changed (an Unban button once the ban is
 * over), and the focus would fall to the page's body. (Not for reads a view repeats on its own: the focus
 * would leave a field being filled.)
 */
export function NoticeLine({ notice, takesFocus = false }: { notice: Notice | null; takesFocus?: boolean }) {
  const line = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (notice && takesFocus) line.current?.focus();
  }, [notice, takesFocus]);
  if (!notice) return null;
  return (
    <p
      ref={line}
      tabIndex={-1}
      role={notice.kind === 'done' ? 'status' : 'alert'}
      class={`notice ${notice.kind}`}
    >
      {notice.text}
    </p>
  );
}

/** How often a view's load that met an outage asks again. */
export const retryMs = 5_000;

/**
 * Runs calls of the admin client one at a time: `busy` meanwhile, the failure as a Notice, and a refused
 * token signs the console out. `outage`: whether the last call failed for an outage (useLoad asks again).
 */
export function useCall() {
  const { signOut } = useSigned();
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const outage = useRef(false);
  // Busy while any call is in flight: one that ends does not clear it while a later one still runs (a list
  // read under old filters ending during the read of new ones hid "Loading keys…").
  const inFlight = useRef(0);
  const run = useCallback(
    async <T,>(call: () => Promise<T>, done?: (result: T) => string): Promise<T | undefined> => {
      inFlight.current++;
      setBusy(true);
      setNotice(null);
      try {
        const result = await call();
        outage.current = false;
        if (done) setNotice({ kind: 'done', text: done(result) });
        return result;
      } catch (error) {
        outage.current = isOutage(error);
        if (isRefusedToken(error)) signOut(`The service refused the token: ${problem(error)} Sign in again.`);
        else
          setNotice({
            kind: 'failed',
            text: `${problem(error)}${outage.current ? ` Asked again every ${retryMs / 1000} s.` : ''}`,
          });
        return undefined;
      } finally {
        inFlight.current--;
        setBusy(inFlight.current > 0);
      }
    },
    [signOut],
  );
  return { busy, notice, setNotice, run, outage };
}

/**
 * The latest of a view's reads: each call begins a read and gives its check, true until another read
 * begins. An answer that comes after a later read began is not shown: a slow read under old filters, a key
 * or a range left, must not replace what the newer one shows.
 */
export function useLatest(): () => () => boolean {
  const latest = useRef(0);
  return useCallback(() => {
    const read = ++latest.current;
    return () => read === latest.current;
  }, []);
}

/**
 * A view's load (`load`: true once it has what it shows): run now and whenever `deps` change, and while it
 * fails for an outage (`outage`, useCall's), again every retryMs: a view opened while the admin API was
 * down shows itself once it answers, without a reload.
 */
export function useLoad(load: () => Promise<boolean>, outage: { current: boolean }, deps: unknown[]) {
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    void load().then((loaded) => {
      if (!loaded && outage.current && live) timer = setTimeout(() => setAttempt((n) => n + 1), retryMs);
    });
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [...deps, attempt]);
}

/** A modal confirmation that says what will happen; Escape or Cancel closes it, nothing done. */
export function Confirm(props: {
  title: string;
  confirm: string;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    element?.showModal();
    return () => element?.close();
  }, []);
  return (
    <dialog
      ref={dialog}
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      <div class="what-happens">{props.children}</div>
      <div class="buttons">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="primary" onClick={props.onConfirm}>
          {props.confirm}
        </button>
      </div>
    </dialog>
  );
}

/**
 * A secret shown once, with a button that copies it. A page that is not a secure context (plain http to
 * anything but loopback) has no clipboard to write to: there the field selects itself for a copy by hand.
 */
export function SecretOnce({ secret, label }: { secret: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const clipboard = typeof navigator.clipboard?.writeText === 'function';
  return (
    <div class="secret">
      <label>
        {label}
        <input
          readOnly
          value={secret}
          size={Math.min(secret.length, 60)}
          spellcheck={false}
          onFocus={(event) => event.currentTarget.select()}
        />
      </label>
      {clipboard && (
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard.writeText(secret);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      )}
      <p>
        It is shown only now: the service cannot show it again.
        {clipboard ? '' : ' Select it and copy it: this page, not served over https, has no clipboard.'}
      </p>
    </div>
  );
}
