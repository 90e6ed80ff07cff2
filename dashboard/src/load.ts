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
