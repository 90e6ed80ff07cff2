import { act } from "preact/test-utils";
import { describe, expect, it } from "vitest";
import { ApiError } from "../src/api";
import { Notice } from "../src/components/States";
import { useAction } from "../src/load";
import { byText, click, mount, settle } from "./helpers";

// A page with two rows whose actions the test settles by hand: each click
// starts an action that waits on a promise the test resolves or rejects.
function Rows(props: { pending: Map<number, { resolve: (text: string | void) => void; reject: (err: unknown) => void }>; after: number[] }) {
  const { busy, notice, run } = useAction<number>();
  const act = async (id: number) => {
    await run(id, () => new Promise<string | void>((resolve, reject) => props.pending.set(id, { resolve, reject })));
    props.after.push(id);
  };
  return (
    <div>
      <Notice notice={notice} />
      {[1, 2].map((id) => (
        <button key={id} type="button" disabled={busy === id} onClick={() => void act(id)}>
          {`row ${id}`}
        </button>
      ))}
      <p data-testid="busy">{busy === null ? "idle" : `busy ${busy}`}</p>
    </div>
  );
}

describe("useAction", () => {
  it("marks the action busy, shows what it says, and clears it for the next", async () => {
    const pending = new Map<number, { resolve: (text: string | void) => void; reject: (err: unknown) => void }>();
    const after: number[] = [];
    const root = await mount(<Rows pending={pending} after={after} />);
    const row = (id: number) => byText(root, "button", `row ${id}`) as HTMLButtonElement;
    const busy = () => root.querySelector("[data-testid=busy]")?.textContent;

    await click(row(1));
    expect(busy()).toBe("busy 1");
    expect(row(1).disabled).toBe(true);
    expect(row(2).disabled).toBe(false);
    await act(() => pending.get(1)!.resolve("Row 1 is on."));
    await settle();
    expect(busy()).toBe("idle");
    expect(root.querySelector(".ok[role=status]")?.textContent).toBe("Row 1 is on.");
    expect(after).toEqual([1]);

    // A failure shows the server's message, and the success before it is gone.
    await click(row(2));
    expect(root.querySelector(".ok")).toBeNull();
    await act(() => pending.get(2)!.reject(new ApiError(409, "conflict", "Row 2 has an experiment running.")));
    await settle();
    expect(busy()).toBe("idle");
    expect(root.querySelector("[role=alert]")?.textContent).toContain("Row 2 has an experiment running.");
    expect(after).toEqual([1, 2]);

    // An action that says nothing leaves no notice, and clears the error.
    await click(row(1));
    expect(root.querySelector("[role=alert]")).toBeNull();
    await act(() => pending.get(1)!.resolve());
    await settle();
    expect(root.querySelector(".ok")).toBeNull();
    expect(root.querySelector("[role=alert]")).toBeNull();
    expect(after).toEqual([1, 2, 1]);
  });

  it("starts with the notice it is given", async () => {
    function Created() {
      const { notice } = useAction<"save">(() => ({ ok: "Created as a draft." }));
      return <Notice notice={notice} />;
    }
    const root = await mount(<Created />);
    expect(root.querySelector(".ok[role=status]")?.textContent).toBe("Created as a draft.");
  });
});
