// Helpers for the component tests: mount a component into happy-dom, let
// its effects and fetches settle, and answer fetch from a table of routes.
import { h, render, type VNode } from "preact";
import { act } from "preact/test-utils";
import { vi } from "vitest";
import { RoleContext } from "../src/roles";
import type { Role } from "../src/types";

/** mounted is the tree the last mount drew: unmounted by the next. */
let mounted: HTMLElement | null = null;

/**
 * mount renders vnode into a fresh element of the document, unmounting the
 * previous tree first: pages listen to the URL, and a tree left mounted
 * would go on fetching when a later test changes it.
 */
export async function mount(vnode: VNode): Promise<HTMLElement> {
  if (mounted) {
    const old = mounted;
    mounted = null;
    await act(() => render(null, old));
  }
  document.body.innerHTML = "";
  const root = document.createElement("div");
  document.body.append(root);
  mounted = root;
  await act(() => render(vnode, root));
  await settle();
  return root;
}

/** settle runs pending promises, timers of 0 ms and the renders they cause. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await act(async () => {
      await new Promise((r) => setTimeout(r, 0));
    });
  }
}

/** click clicks an element and lets the app react. */
export async function click(el: Element | null | undefined): Promise<void> {
  if (!el) throw new Error("nothing to click");
  await act(() => (el as HTMLElement).click());
  await settle();
}

/** type sets an input's value as a person typing would. */
export async function type(el: Element | null | undefined, value: string): Promise<void> {
  if (!el) throw new Error("nothing to type into");
  const input = el as HTMLInputElement;
  await act(() => {
    input.value = value;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

/** submit submits a form. */
export async function submit(form: Element | null | undefined): Promise<void> {
  if (!form) throw new Error("no form");
  await act(() => {
    form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
  });
  await settle();
}

/** byText finds the first element of a kind whose text is exactly text. */
export function byText(root: ParentNode, selector: string, text: string): HTMLElement | undefined {
  return [...root.querySelectorAll<HTMLElement>(selector)].find((e) => e.textContent?.trim() === text);
}

/** A recorded call to fetch. */
export interface Call {
  method: string;
  path: string;
  body: unknown;
  /** The query string's parameters. */
  query: URLSearchParams;
}

type Answer = { status?: number; body?: unknown; headers?: Record<string, string> };
type Route = (call: Call) => Answer | undefined;

/**
 * fakeFetch replaces fetch with one that answers from routes, keyed
 * "METHOD /path" (without the query string), and records every call.
 */
export function fakeFetch(routes: Record<string, Answer | Route>): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal("fetch", async (input: string, init: RequestInit = {}) => {
    const method = init.method ?? "GET";
    const [path, search = ""] = input.split("?");
    const call = { method, path, body: init.body ? JSON.parse(String(init.body)) : undefined, query: new URLSearchParams(search) };
    calls.push(call);
    const route = routes[`${method} ${path}`];
    const answer = typeof route === "function" ? route(call) : route;
    if (!answer) return new Response(JSON.stringify({ error: { code: "not_found", message: "No route." } }), { status: 404 });
    const status = answer.status ?? 200;
    return new Response(status === 204 ? null : JSON.stringify(answer.body ?? {}), { status, headers: answer.headers });
  });
  return calls;
}

/** asRole draws vnode as the app does for a user of role in the product's workspace. */
export function asRole(role: Role, vnode: VNode): VNode {
  return h(RoleContext.Provider, { value: role }, vnode) as VNode;
}

/** choose picks an option of a select as a person would. */
export async function choose(el: Element | null, value: string): Promise<void> {
  const s = el as HTMLSelectElement;
  await act(() => {
    s.value = value;
    s.dispatchEvent(new Event("change", { bubbles: true }));
  });
}
