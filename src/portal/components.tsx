import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiProblem, type Problem } from "./api.js";

/** Shared pieces of the pages. Everything shown from data is rendered as text by Preact, never as markup. */

export function problemFrom(e: unknown): Problem {
  if (e instanceof ApiProblem) return e.problem;
  return { title: "Something went wrong in the portal", detail: e instanceof Error ? e.message : String(e), status: 0 };
}

/** An API error as the API states it: its title and detail, each violation, and the trace id to quote. */
export function ProblemView({ problem }: { problem: Problem }) {
  return (
    <div class="problem" role="alert">
      <p class="problem-title">{problem.title}</p>
      {problem.detail && <p>{problem.detail}</p>}
      {problem.errors && problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((v) => (
            <li key={`${v.field}:${v.message}`}>
              <code>{v.field}</code>: {v.message}
            </li>
          ))}
        </ul>
      )}
      {problem.traceId && (
        <p class="trace">
          Trace ID (quote it to support): <code>{problem.traceId}</code>
        </p>
      )}
    </div>
  );
}

export interface Loaded<T> {
  data: T | null;
  problem: Problem | null;
  loading: boolean;
  reload: () => void;
}

/** Loads what a page shows, again whenever `deps` change; the last answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; problem: Problem | null; loading: boolean }>({ data: null, problem: null, loading: true });
  const [round, setRound] = useState(0);
  // `load` is a new closure on every render; `deps` says when what it loads changes.
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current && setState({ data, problem: null, loading: false }),
      (e: unknown) => current && setState({ data: null, problem: problemFrom(e), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return { ...state, reload: useCallback(() => setRound((r) => r + 1), []) };
}

export interface Action<T> {
  run: (work: () => Promise<T>) => Promise<T | null>;
  busy: boolean;
  problem: Problem | null;
  result: T | null;
  clear: () => void;
}

/** A control's call: busy while it runs (the button is disabled), then its result or its problem. */
export function useAction<T>(): Action<T> {
  const [state, setState] = useState<{ busy: boolean; problem: Problem | null; result: T | null }>({ busy: false, problem: null, result: null });
  const run = useCallback(async (work: () => Promise<T>) => {
    setState({ busy: true, problem: null, result: null });
    try {
      const result = await work();
      setState({ busy: false, problem: null, result });
      return result;
    } catch (e) {
      setState({ busy: false, problem: problemFrom(e), result: null });
      return null;
    }
  }, []);
  const clear = useCallback(() => setState({ busy: false, problem: null, result: null }), []);
  return { run, ...state, clear };
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** Text (a receiver's response body, a payload) in a named, focusable, scrollable block: keyboard users can scroll it. */
export function TextBlock({ text, label }: { text: string; label: string }) {
  return (
    <section aria-label={label}>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard to scroll it. */}
      <pre class="json" tabIndex={0}>
        {text}
      </pre>
    </section>
  );
}

/** Pretty JSON in such a block. */
export function Json({ value, label }: { value: unknown; label: string }) {
  return <TextBlock text={JSON.stringify(value, null, 2)} label={label} />;
}

/** `2026-11-26 12:00:01 UTC`: one unambiguous form for times a partner may quote to support. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

export function Time({ iso, none = "–" }: { iso: string | null | undefined; none?: string }) {
  return iso ? <time dateTime={iso}>{formatTime(iso)}</time> : <span>{none}</span>;
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value.toLowerCase()}`}>{value}</span>;
}

/** Copies a value shown once (a new signing secret); where the clipboard is unavailable, selects it for the user. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone("Copied to the clipboard.");
    } catch {
      setDone("The clipboard is not available here: select the secret and copy it.");
    }
  };
  return (
    <span>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" class="muted">
        {done ?? ""}
      </span>
    </span>
  );
}

/** A secret shown once: the value, a copy button, and the warning. */
export function ShownOnce({ title, secret }: { title: string; secret: string }) {
  return (
    <section class="secret" aria-label={title}>
      <p class="secret-title">{title}</p>
      <p>
        <code class="secret-value">{secret}</code> <CopyButton text={secret} label="Copy secret" />
      </p>
      <p class="muted">Store it now: it is shown only once, and leaving this page forgets it.</p>
    </section>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Moving between pages moves the focus to the new page's heading, so keyboard and screen reader users follow.
  useEffect(() => {
    document.title = `${title} · Partner portal`;
    heading.current?.focus();
  }, [title]);
  return (
    <>
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </>
  );
}

/** A list's next page, by the cursor the API gave; the previous cursors are kept to go back. */
export function Pager({ onPrevious, onNext, hasPrevious, hasNext }: { onPrevious: () => void; onNext: () => void; hasPrevious: boolean; hasNext: boolean }) {
  if (!hasPrevious && !hasNext) return null;
  return (
    <div class="pager">
      <button type="button" onClick={onPrevious} disabled={!hasPrevious}>
        Previous page
      </button>
      <button type="button" onClick={onNext} disabled={!hasNext}>
        Next page
      </button>
    </div>
  );
}

/** Cursor pagination state: the cursor of the page shown and those before it. */
export function useCursors(resetOn: unknown[]) {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  // A new filter starts again at the first page.
  useEffect(() => setStack([undefined]), resetOn);
  return {
    cursor: stack[stack.length - 1],
    hasPrevious: stack.length > 1,
    next: (cursor: string) => setStack((s) => [...s, cursor]),
    previous: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
  };
}
