// useLoad runs an API call when its inputs change and keeps its state for
// the page: loading (a skeleton), failed (the server's message) or done.
// An answer that arrives after the inputs changed again is dropped.
import { useEffect, useRef, useState } from "preact/hooks";
import { message } from "./api";

export type Load<T> =
  | { state: "idle" }
  | { state: "loading"; previous?: T }
  | { state: "failed"; error: string }
  | { state: "done"; data: T };

export function useLoad<T>(fn: (() => Promise<T>) | null, deps: unknown[]): [Load<T>, () => void] {
  const [load, setLoad] = useState<Load<T>>(fn ? { state: "loading" } : { state: "idle" });
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    if (!fn) {
      setLoad({ state: "idle" });
      return;
    }
    const mine = ++seq.current;
    setLoad((l) => ({ state: "loading", previous: l.state === "done" ? l.data : undefined }));
    fn().then(
      (data) => mine === seq.current && setLoad({ state: "done", data }),
      (err) => mine === seq.current && setLoad({ state: "failed", error: message(err) }),
    );
  }, [...deps, tick]);
  return [load, () => setTick((t) => t + 1)];
}

/** NoticeText is how a page's last action ended: what it did, or why it failed. */
export type NoticeText = { ok?: string; error?: string };

/**
 * useAction runs a page's actions one at a time and keeps what the last
 * one said. busy names the action running (a row's id, or a name of the
 * page's choosing) or is null. run clears the notice, marks key busy and
 * awaits fn: the text fn returns becomes the success notice, an error it
 * throws the error notice, with the server's message. run never throws,
 * so what follows an awaited run happens however the action ended.
 */
export function useAction<K>(initial: NoticeText | (() => NoticeText) = {}) {
  const [busy, setBusy] = useState<K | null>(null);
  const [notice, setNotice] = useState<NoticeText>(initial);
  const run = async (key: K, fn: () => Promise<string | void>): Promise<void> => {
    setBusy(key);
    setNotice({});
    try {
      const ok = await fn();
      if (ok) setNotice({ ok });
    } catch (err) {
      setNotice({ error: message(err) });
    } finally {
      setBusy(null);
    }
  };
  return { busy, notice, setNotice, run };
}
