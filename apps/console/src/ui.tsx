// The pieces every view uses: the signed-in context, a confirmation dialog, the answer of an action, and
// the hook that runs a call of the admin client and turns its failure into words.
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { type Admin, isRefusedToken, problem } from './session.js';

export type Signed = { admin: Admin; signOut: (reason?: string) => void };
export const SignedIn = createContext<Signed | null>(null);

export function useSigned(): Signed {
  const signed = useContext(SignedIn);
  if (!signed) throw new Error('useSigned outside a signed-in console');
  return signed;
}

export type Notice = { kind: 'done' | 'failed'; text: string };

/** An action's answer: a status for what was done, an alert for what failed (read out by screen readers). */
export function NoticeLine({ notice }: { notice: Notice | null }) {
  if (!notice) return null;
  return notice.kind === 'done' ? (
    <p role="status" class="notice done">
      {notice.text}
    </p>
  ) : (
    <p role="alert" class="notice failed">
      {notice.text}
    </p>
  );
}

/**
 * Runs calls of the admin client one at a time: `busy` meanwhile, the failure as a Notice, and a refused
 * token signs the console out.
 */
export function useCall() {
  const { signOut } = useSigned();
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const run = useCallback(
    async <T,>(call: () => Promise<T>, done?: (result: T) => string): Promise<T | undefined> => {
      setBusy(true);
      setNotice(null);
      try {
        const result = await call();
        if (done) setNotice({ kind: 'done', text: done(result) });
        return result;
      } catch (error) {
        if (isRefusedToken(error)) signOut(`The service refused the token: ${problem(error)} Sign in again.`);
        else setNotice({ kind: 'failed', text: problem(error) });
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [signOut],
  );
  return { busy, notice, setNotice, run };
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
