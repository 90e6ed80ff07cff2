import type { Product } from "../types";

/** ProductSwitcher picks the product every page shows. */
export function ProductSwitcher(props: { products: Product[]; current: number | null; onChange: (id: number) => void }) {
  return (
    <label class="switcher">
      <span class="label">Product</span>
      <select
        aria-label="Product"
        value={props.current ?? ""}
        onChange={(e) => props.onChange(Number((e.currentTarget as HTMLSelectElement).value))}
      >
        {props.products.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}
